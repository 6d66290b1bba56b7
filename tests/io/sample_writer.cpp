// Writes safetensors files with lazytensor, and manifest.json naming what each must hold, for
// check_safetensors.py to read with code of its own:
//     io_sample_writer DIR
#include <bit>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include <lazytensor/io.hpp>
#include <lazytensor/lazytensor.hpp>
#include <lazytensor/nn.hpp>
#include <lazytensor/optim.hpp>

namespace {

/// A JSON string literal (names and metadata here are ASCII).
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// The values of `t` as JSON numbers (BF16 and F16 as their 16-bit patterns, BOOL as true/false).
std::string values(const lt::Tensor& t) {
  std::string out = "[";
  lt::Tensor c = t.cpu();
  auto add = [&](const std::string& v) { out += (out.size() > 1 ? "," : "") + v; };
  switch (t.dtype()) {
    case lt::DType::f32: for (float v : c.to_vector<float>()) add(number(v)); break;
    case lt::DType::f64: for (double v : c.to_vector<double>()) add(number(v)); break;
    case lt::DType::i32: for (auto v : c.to_vector<std::int32_t>()) add(std::to_string(v)); break;
    case lt::DType::i64: for (auto v : c.to_vector<std::int64_t>()) add(std::to_string(v)); break;
    case lt::DType::boolean: for (bool v : c.to_vector<bool>()) add(v ? "true" : "false"); break;
    case lt::DType::bf16:
    case lt::DType::f16: {
      lt::Array a = lt::materialize(c);  // made contiguous above
      for (std::int64_t k = 0; k < a.view.numel(); ++k) add(std::to_string(a.view.ptr<std::uint16_t>()[k]));
      break;
    }
  }
  return out + "]";
}

std::string entry(const std::string& file, const lt::TensorMap& tensors, const lt::Metadata& metadata) {
  std::string out = quote(file) + ":{\"metadata\":{";
  bool first = true;
  for (auto& [k, v] : metadata) out += (std::exchange(first, false) ? "" : ",") + quote(k) + ":" + quote(v);
  out += "},\"tensors\":{";
  first = true;
  for (auto& [name, t] : tensors) {
    std::string shape = "[";
    for (std::int64_t e : t.shape()) shape += (shape.size() > 1 ? "," : "") + std::to_string(e);
    out += (std::exchange(first, false) ? "" : ",") + quote(name) + ":{\"dtype\":" +
           quote(std::string(lt::io::safetensors_name(t.dtype()))) + ",\"shape\":" + shape + "],\"values\":" +
           values(t) + "}";
  }
  return out + "}}";
}

struct Net : lt::nn::Module {
  lt::nn::Linear fc{4, 3};
  lt::nn::BatchNorm1d bn{3};
  Net() { LT_REGISTER_MODULES(fc, bn); }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: io_sample_writer DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  try {
    std::filesystem::create_directories(dir);
    lt::manual_seed(7);
    lt::Device dev = lt::device();
    lt::Tensor base = lt::randn({3, 4}, dev);
    lt::Array bf = lt::Array::empty(lt::bf16, {5});
    for (int k = 0; k < 5; ++k) bf.view.ptr<std::uint16_t>()[k] = static_cast<std::uint16_t>(0x3F80 + 3 * k);
    lt::TensorMap tensors{{"lazy", lt::Tensor(base * 2.0f + 1.0f)},
                          {"transposed", base.t()},
                          {"f64", lt::arange(0, 6, 1, lt::cpu, lt::f64).reshape({2, 3}) / 3.0},
                          {"i32", lt::arange(-3, 3, 1, lt::cpu, lt::i32)},
                          {"i64", lt::full({2, 2}, 1LL << 40, lt::cpu, lt::i64)},
                          {"mask", lt::arange(0, 4, 1, lt::cpu, lt::i64) > 1},
                          {"scalar", lt::full({}, 0.25, lt::cpu, lt::f32)},
                          {"empty", lt::zeros({2, 0, 3})},
                          {"half", lt::tensor_from_array(bf, lt::cpu)},
                          {"ieee_half", lt::from_vector(std::vector<lt::float16>{lt::float16(1.5f), lt::float16(-65504.0f),
                                                                                 lt::float16::from_bits(0x0001)})}};
    lt::Metadata metadata{{"format", "pt"}, {"note", "written by io_sample_writer"}};
    lt::save(tensors, dir + "/sample.safetensors", metadata);

    Net net;
    net.to(dev);
    lt::optim::SGD opt(net.parameters(), {.lr = 0.1, .momentum = 0.9});
    lt::Tensor x = lt::randn({8, 4}, dev);
    lt::Tensor loss = net.bn(net.fc(x)).sum();
    loss.backward();
    opt.step();
    lt::data::LoaderPosition position{2, 5};
    lt::Checkpoint{.model = &net, .optimizer = &opt, .loader = &position}.save(dir + "/checkpoint.safetensors",
                                                                              {{"epoch", "2"}});
    lt::SafetensorsContents saved = lt::load_with_metadata(dir + "/checkpoint.safetensors");
    lt::Metadata checkpoint_metadata = saved.metadata;

    std::ofstream manifest(dir + "/manifest.json");
    manifest << "{" << entry("sample.safetensors", tensors, metadata) << ","
             << entry("checkpoint.safetensors", saved.tensors, checkpoint_metadata) << "}\n";
    if (!manifest.good()) throw lt::Error("cannot write " + dir + "/manifest.json");
  } catch (const lt::Error& e) {
    std::cerr << e.what() << '\n';
    return 1;
  }
}
