#pragma once
// Where op descriptors are defined. Every file of a program sees each descriptor as a
// declaration made from the op table; the one translation unit that defines
// LAZYTENSOR_IMPLEMENTATION (lazytensor/implementation.hpp) defines them, so that the kernels a
// descriptor names are instantiated and compiled once per program, not once per file.

#ifdef LAZYTENSOR_IMPLEMENTATION
#define LT_IMPLEMENTATION_ONLY(...) __VA_ARGS__
#else
#define LT_IMPLEMENTATION_ONLY(...)
#define LAZYTENSOR_USER_HEADERS 1  // lazytensor/implementation.hpp checks that none came before it
#endif

/// `LT_DEFINE_OP(name, OpDesc{.kind = ..., ...});` defines the descriptor that the op table
/// declares, its id and name taken from the op's table line.
#define LT_DEFINE_OP(name, ...) LT_IMPLEMENTATION_ONLY(constexpr OpDesc name = ::lt::described(name##_row, __VA_ARGS__))

/// Declares (and in the implementation defines) the descriptor of an elementwise op of N
/// operands from its op table line.
#define LT_ELEMENTWISE_DESCRIPTOR(N, name, number, Fn, Rule, face, ...)                             \
  extern const ::lt::ElementwiseDesc<Fn, Rule, N, ::lt::OpId::name> name LT_IMPLEMENTATION_ONLY(     \
      ; constexpr ::lt::ElementwiseDesc<Fn, Rule, N, ::lt::OpId::name> name =                      \
          ::lt::elementwise_op<N, Fn, Rule, ::lt::OpId::name>(#name, __VA_ARGS__))
#define LT_UNARY_DESCRIPTOR(...) LT_ELEMENTWISE_DESCRIPTOR(1, __VA_ARGS__);
#define LT_BINARY_DESCRIPTOR(...) LT_ELEMENTWISE_DESCRIPTOR(2, __VA_ARGS__);
#define LT_TERNARY_DESCRIPTOR(...) LT_ELEMENTWISE_DESCRIPTOR(3, __VA_ARGS__);
