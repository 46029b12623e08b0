// Op codes of the elementwise kernels (elementwise.cu). The Go side (elementwise.go, ewOp)
// uses the same numbers; ops_test.go checks that the two lists agree.
#pragma once

enum EwOp {
  // unary: out = f(a)
  EW_ABS = 0,
  EW_NEG = 1,
  EW_SIGN = 2,
  EW_RELU = 3,
  EW_SQRT = 4,
  EW_RECIP = 5,
  EW_EXP = 6,
  EW_LOG = 7,
  EW_TANH = 8,
  EW_SIGMOID = 9,
  EW_SIN = 10,
  EW_COS = 11,
  EW_TAN = 12,
  EW_ATAN = 13,
  EW_ERF = 14,
  EW_FLOOR = 15,
  EW_CEIL = 16,
  EW_ROUND = 17,
  EW_SOFTPLUS = 18,
  EW_SOFTSIGN = 19,
  EW_GELU = 20,
  EW_GELU_TANH = 21,
  EW_LEAKY_RELU = 22,
  EW_ELU = 23,
  EW_HARD_SIGMOID = 24,
  EW_QUICK_GELU = 25,
  EW_SILU = 26,
  EW_HARD_SWISH = 27,
  EW_IDENTITY = 28,
  EW_SCALE = 29,
  // binary: out = f(a, b)
  EW_ADD = 64,
  EW_SUB = 65,
  EW_MUL = 66,
  EW_DIV = 67,
  EW_MOD = 68,   // integers: Python's sign rule (sign of the divisor)
  EW_FMOD = 69,  // C fmod (sign of the dividend)
  EW_MAX = 70,
  EW_MIN = 71,
  EW_POW = 72,
  EW_BIAS_GELU = 73,       // gelu_erf(a + b)
  EW_BIAS_GELU_TANH = 74,  // gelu_tanh(a + b)
  // ternary: out = f(a, b, c)
  EW_ADD3 = 96,
  EW_CLIP = 97,  // min(max(a, b), c); an absent bound is infinite (an integer type's limit)
  // bool output from here on
  EW_EQ = 128,
  EW_LT = 129,
  EW_LE = 130,
  EW_GT = 131,
  EW_GE = 132,
  EW_ISNAN = 133,
  EW_ISINF = 134,  // alpha != 0: detect negative, beta != 0: detect positive
  // logical, bool operands
  EW_AND = 160,
  EW_OR = 161,
  EW_XOR = 162,
  EW_NOT = 163,
};

#define EW_CMP_FIRST 128
