// Saves checkpoints to one path in a loop, generation after generation, until it is killed:
//     io_save_loop PATH FIRST_GENERATION
// Generation g holds tensors whose every element is g, and "generation" = g in its metadata,
// so a reader can tell a whole file of one generation from anything else.
#include <cstdlib>
#include <iostream>
#include <string>

#include <lazytensor/io.hpp>
#include <lazytensor/lazytensor.hpp>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: io_save_loop PATH FIRST_GENERATION\n";
    return 2;
  }
  const std::string path = argv[1];
  try {
    for (long g = std::atol(argv[2]);; ++g) {
      lt::save({{"a", lt::full({256, 1024}, static_cast<double>(g), lt::cpu, lt::f32)},
                {"b", lt::full({100'000}, g, lt::cpu, lt::i64)},
                {"generation", lt::full({}, g, lt::cpu, lt::i64)}},
               path, {{"generation", std::to_string(g)}});
    }
  } catch (const lt::Error& e) {
    std::cerr << e.what() << '\n';
    return 1;
  }
}
