#include "tests/backends/cbpf.h"

#include <cstring>

namespace ward::test::cbpf {
namespace {

// Opcode fields (Documentation/networking/filter.rst).
enum : uint16_t {
  kLd = 0x00,
  kLdx = 0x01,
  kSt = 0x02,
  kStx = 0x03,
  kAlu = 0x04,
  kJmp = 0x05,
  kRet = 0x06,
  kMisc = 0x07,
  kW = 0x00,
  kImm = 0x00,
  kAbs = 0x20,
  kMem = 0x60,
  kLen = 0x80,
  kAdd = 0x00,
  kSub = 0x10,
  kMul = 0x20,
  kDiv = 0x30,
  kOr = 0x40,
  kAnd = 0x50,
  kLsh = 0x60,
  kRsh = 0x70,
  kNeg = 0x80,
  kXor = 0xa0,
  kJa = 0x00,
  kJeq = 0x10,
  kJgt = 0x20,
  kJge = 0x30,
  kJset = 0x40,
  kK = 0x00,
  kX = 0x08,
  kA = 0x10,
  kTax = 0x00,
  kTxa = 0x80,
};

constexpr size_t kMaxInsns = 4096;  // BPF_MAXINSNS
constexpr uint32_t kMemWords = 16;  // BPF_MEMWORDS
constexpr uint32_t kDataSize = 64;  // sizeof(struct seccomp_data)

uint16_t Class(uint16_t code) { return code & 0x07; }

bool IsConditionalJump(uint16_t code) {
  if (Class(code) != kJmp) return false;
  const uint16_t op = code & 0xf0;
  return op == kJeq || op == kJgt || op == kJge || op == kJset;
}

// seccomp_check_filter's list, after its rewrites of BPF_LEN loads.
bool SeccompAllows(uint16_t code) {
  static const uint16_t kAllowed[] = {kLd | kW | kAbs,
                                      kLd | kW | kLen,
                                      kLdx | kW | kLen,
                                      kRet | kK,
                                      kRet | kA,
                                      kAlu | kAdd | kK,
                                      kAlu | kAdd | kX,
                                      kAlu | kSub | kK,
                                      kAlu | kSub | kX,
                                      kAlu | kMul | kK,
                                      kAlu | kMul | kX,
                                      kAlu | kDiv | kK,
                                      kAlu | kDiv | kX,
                                      kAlu | kAnd | kK,
                                      kAlu | kAnd | kX,
                                      kAlu | kOr | kK,
                                      kAlu | kOr | kX,
                                      kAlu | kXor | kK,
                                      kAlu | kXor | kX,
                                      kAlu | kLsh | kK,
                                      kAlu | kLsh | kX,
                                      kAlu | kRsh | kK,
                                      kAlu | kRsh | kX,
                                      kAlu | kNeg,
                                      kLd | kImm,
                                      kLdx | kImm,
                                      kMisc | kTax,
                                      kMisc | kTxa,
                                      kLd | kMem,
                                      kLdx | kMem,
                                      kSt,
                                      kStx,
                                      kJmp | kJa,
                                      kJmp | kJeq | kK,
                                      kJmp | kJeq | kX,
                                      kJmp | kJge | kK,
                                      kJmp | kJge | kX,
                                      kJmp | kJgt | kK,
                                      kJmp | kJgt | kX,
                                      kJmp | kJset | kK,
                                      kJmp | kJset | kX};
  for (uint16_t c : kAllowed) {
    if (c == code) return true;
  }
  return false;
}

std::string At(size_t pc, const std::string& what) {
  return "instruction " + std::to_string(pc) + ": " + what;
}

// bpf_check_classic's per-instruction checks, then seccomp's.
bool CheckInsn(const std::vector<Insn>& p, size_t pc, std::string* error) {
  const Insn& i = p[pc];
  const size_t len = p.size();
  if (!SeccompAllows(i.code)) return (*error = At(pc, "opcode not allowed in seccomp")), false;
  if (i.code == (kAlu | kDiv | kK) && i.k == 0) return (*error = At(pc, "division by 0")), false;
  if ((i.code == (kAlu | kLsh | kK) || i.code == (kAlu | kRsh | kK)) && i.k >= 32) {
    return (*error = At(pc, "shift by 32 or more")), false;
  }
  if ((i.code == (kLd | kMem) || i.code == (kLdx | kMem) || i.code == kSt || i.code == kStx) &&
      i.k >= kMemWords) {
    return (*error = At(pc, "no such scratch word")), false;
  }
  if (i.code == (kJmp | kJa) && i.k >= len - pc - 1) {
    return (*error = At(pc, "jump past the end")), false;
  }
  if (IsConditionalJump(i.code) && (pc + i.jt + 1 >= len || pc + i.jf + 1 >= len)) {
    return (*error = At(pc, "jump past the end")), false;
  }
  if (i.code == (kLd | kW | kAbs) && (i.k >= kDataSize || i.k % 4 != 0)) {
    return (*error = At(pc, "load outside seccomp_data or unaligned")), false;
  }
  return true;
}

// check_load_and_stores: a scratch word is read only after a write on
// every path to the read.
bool CheckMemory(const std::vector<Insn>& p, std::string* error) {
  std::vector<uint16_t> masks(p.size(), 0xffff);
  uint16_t valid = 0;
  for (size_t pc = 0; pc < p.size(); ++pc) {
    valid &= masks[pc];
    const Insn& i = p[pc];
    if (i.code == kSt || i.code == kStx) {
      valid |= static_cast<uint16_t>(1u << i.k);
    } else if (i.code == (kLd | kMem) || i.code == (kLdx | kMem)) {
      if (!(valid & (1u << i.k)))
        return (*error = At(pc, "scratch word read before written")), false;
    } else if (i.code == (kJmp | kJa)) {
      masks[pc + 1 + i.k] &= valid;
      valid = 0xffff;
    } else if (IsConditionalJump(i.code)) {
      masks[pc + 1 + i.jt] &= valid;
      masks[pc + 1 + i.jf] &= valid;
      valid = 0xffff;
    }
  }
  return true;
}

uint32_t Decode(const std::string& b, size_t at, int size, bool big) {
  uint32_t v = 0;
  for (int i = 0; i < size; ++i) {
    const uint32_t byte = static_cast<unsigned char>(b[at + i]);
    v |= byte << (8 * (big ? size - 1 - i : i));
  }
  return v;
}

// The 32-bit word at `offset` of seccomp_data as laid out in the filter's
// machine: a 64-bit field's halves follow its byte order.
uint32_t Word(const SeccompData& d, uint32_t offset, bool big) {
  if (offset == 0) return static_cast<uint32_t>(d.nr);
  if (offset == 4) return d.arch;
  const uint64_t v = offset < 16 ? d.instruction_pointer : d.args[(offset - 16) / 8];
  const bool low_half = (offset % 8 == 0) != big;
  return static_cast<uint32_t>(low_half ? v : v >> 32);
}

bool Jump(uint16_t op, uint32_t a, uint32_t v) {
  switch (op) {
    case kJeq:
      return a == v;
    case kJgt:
      return a > v;
    case kJge:
      return a >= v;
    default:  // kJset
      return (a & v) != 0;
  }
}

}  // namespace

bool Load(const std::string& bytes, bool big_endian, Program* out, std::string* error) {
  if (bytes.empty() || bytes.size() % 8 != 0 || bytes.size() / 8 > kMaxInsns) {
    *error = "not 1 to 4096 instructions of 8 bytes";
    return false;
  }
  out->big_endian = big_endian;
  out->insns.clear();
  for (size_t at = 0; at < bytes.size(); at += 8) {
    Insn i;
    i.code = static_cast<uint16_t>(Decode(bytes, at, 2, big_endian));
    i.jt = static_cast<uint8_t>(bytes[at + 2]);
    i.jf = static_cast<uint8_t>(bytes[at + 3]);
    i.k = Decode(bytes, at + 4, 4, big_endian);
    out->insns.push_back(i);
  }
  for (size_t pc = 0; pc < out->insns.size(); ++pc) {
    if (!CheckInsn(out->insns, pc, error)) return false;
  }
  const uint16_t last = out->insns.back().code;
  if (last != (kRet | kK) && last != (kRet | kA)) {
    *error = "the last instruction is not a RET";
    return false;
  }
  return CheckMemory(out->insns, error);
}

Outcome Run(const Program& program, const SeccompData& data) {
  Outcome o;
  uint32_t a = 0, x = 0, mem[kMemWords] = {};
  const std::vector<Insn>& p = program.insns;
  for (size_t pc = 0; pc < p.size(); ++pc) {
    const Insn& i = p[pc];
    ++o.executed;
    const uint16_t cls = Class(i.code);
    if (cls == kRet) {
      o.ret = (i.code & 0x18) == kA ? a : i.k;
      return o;
    }
    if (cls == kLd || cls == kLdx) {
      const uint16_t mode = i.code & 0xe0;
      o.read_args |= mode == kAbs && i.k >= 8;
      uint32_t v = mode == kAbs   ? Word(data, i.k, program.big_endian)
                   : mode == kMem ? mem[i.k]
                   : mode == kLen ? kDataSize
                                  : i.k;
      (cls == kLd ? a : x) = v;
    } else if (cls == kSt || cls == kStx) {
      mem[i.k] = cls == kSt ? a : x;
    } else if (cls == kMisc) {
      if ((i.code & 0xf8) == kTax) {
        x = a;
      } else {
        a = x;
      }
    } else if (cls == kAlu) {
      const uint32_t v = (i.code & kX) ? x : i.k;
      switch (i.code & 0xf0) {
        case kAdd:
          a += v;
          break;
        case kSub:
          a -= v;
          break;
        case kMul:
          a *= v;
          break;
        case kDiv:
          // Classic BPF: a division by a zero X ends the program with 0.
          if (v == 0) return o.ret = 0, o;
          a /= v;
          break;
        case kOr:
          a |= v;
          break;
        case kAnd:
          a &= v;
          break;
        case kXor:
          a ^= v;
          break;
        case kLsh:
        case kRsh:
          if (v >= 32) return o.error = "shift by X >= 32", o;
          a = (i.code & 0xf0) == kLsh ? a << v : a >> v;
          break;
        case kNeg:
          a = 0u - a;
          break;
      }
    } else if (cls == kJmp) {
      if ((i.code & 0xf0) == kJa) {
        pc += i.k;
      } else {
        pc += Jump(i.code & 0xf0, a, (i.code & kX) ? x : i.k) ? i.jt : i.jf;
      }
    }
  }
  o.error = "ran off the end";  // Load refuses such programs
  return o;
}

}  // namespace ward::test::cbpf
