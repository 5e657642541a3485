#include "codegen/target/CubinInfo.h"

#include <regex>
#include <sstream>

#include "llvm/Object/ELF.h"
#include "llvm/Object/ELFTypes.h"

namespace tessera::codegen {

namespace {

using ELF = llvm::object::ELF64LE;

// .nv.info attributes: a format byte, an attribute byte, then 16 bits that hold the payload's
// size for EIFMT_SVAL (4) and the value itself for the other formats.
constexpr uint8_t kFormatSized = 0x04;
enum Attribute : uint8_t { FrameSize = 0x11, MinStackSize = 0x12, MaxStackSize = 0x23, RegCount = 0x2f };
constexpr uint8_t kCudaEntry = 0x10;  // st_other of a kernel symbol (STO_CUDA_ENTRY)

uint32_t readU32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24; }

struct PerSymbol {
  uint32_t registers = 0, frame = 0, minStack = 0, maxStack = 0;
  bool hasMaxStack = false;
};

// Walks the global .nv.info section: (symbol index, value) pairs of the four attributes above.
bool readInfo(llvm::ArrayRef<uint8_t> data, std::map<uint32_t, PerSymbol>& out, std::string& error) {
  size_t at = 0;
  while (at + 4 <= data.size()) {
    uint8_t format = data[at], attribute = data[at + 1];
    uint16_t size = data[at + 2] | data[at + 3] << 8;
    at += 4;
    if (format != kFormatSized) continue;  // the 16 bits were the value
    if (at + size > data.size()) {
      error = "truncated .nv.info attribute";
      return false;
    }
    if (size == 8) {
      uint32_t symbol = readU32(&data[at]), value = readU32(&data[at + 4]);
      PerSymbol& s = out[symbol];
      switch (attribute) {
        case RegCount: s.registers = value; break;
        case FrameSize: s.frame = value; break;
        case MinStackSize: s.minStack = value; break;
        case MaxStackSize:
          s.maxStack = value;
          s.hasMaxStack = true;
          break;
        default: break;
      }
    }
    at += size;
  }
  return true;
}

}  // namespace

bool readCubin(const std::string& image, std::vector<CubinFunction>& functions, std::string& error) {
  auto file = llvm::object::ELFFile<ELF>::create(llvm::StringRef(image));
  if (!file) {
    error = "not an ELF cubin: " + llvm::toString(file.takeError());
    return false;
  }
  auto sections = file->sections();
  if (!sections) {
    error = llvm::toString(sections.takeError());
    return false;
  }
  const ELF::Shdr* symtab = nullptr;
  std::map<uint32_t, PerSymbol> info;
  std::map<std::string, uint64_t> sectionSizes;  // ".nv.shared.f" -> size
  for (const ELF::Shdr& s : *sections) {
    auto name = file->getSectionName(s);
    if (!name) {
      error = llvm::toString(name.takeError());
      return false;
    }
    if (s.sh_type == llvm::ELF::SHT_SYMTAB) symtab = &s;
    sectionSizes[name->str()] = s.sh_size;
    if (*name == ".nv.info") {
      auto data = file->getSectionContents(s);
      if (!data) {
        error = llvm::toString(data.takeError());
        return false;
      }
      if (!readInfo(*data, info, error)) return false;
    }
  }
  if (!symtab) {
    error = "the cubin has no symbol table";
    return false;
  }
  auto symbols = file->symbols(symtab);
  auto strings = file->getStringTableForSymtab(*symtab);
  if (!symbols || !strings) {
    error = "unreadable symbol table in the cubin";
    if (!symbols) llvm::consumeError(symbols.takeError());
    if (!strings) llvm::consumeError(strings.takeError());
    return false;
  }
  bool reservedInShared = false;
  for (const auto& [name, size] : sectionSizes) reservedInShared |= name.rfind(".nv.shared.reserved.", 0) == 0;
  functions.clear();
  for (size_t i = 0; i < symbols->size(); ++i) {
    const ELF::Sym& sym = (*symbols)[i];
    if (sym.getType() != llvm::ELF::STT_FUNC || sym.st_shndx == llvm::ELF::SHN_UNDEF) continue;
    auto name = sym.getName(*strings);
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    CubinFunction f;
    f.name = name->str();
    f.isKernel = (sym.st_other & kCudaEntry) != 0;
    const PerSymbol& a = info[static_cast<uint32_t>(i)];
    f.registers = a.registers;
    f.frameBytes = a.frame;
    f.stackBytes = a.hasMaxStack ? a.maxStack : a.minStack;
    auto size = [&](const std::string& prefix) {
      auto it = sectionSizes.find(prefix + f.name);
      return it == sectionSizes.end() ? 0 : it->second;
    };
    f.sharedBytes = size(".nv.shared.");
    f.localBytes = size(".nv.local.");
    f.constant0Bytes = size(".nv.constant0.");
    f.sharedIncludesReserved = reservedInShared;
    functions.push_back(f);
  }
  return true;
}

std::map<std::string, PtxasFunctionInfo> parsePtxasInfo(const std::string& log) {
  // ptxas info    : Function properties for NAME
  //     F bytes stack frame, S bytes spill stores, L bytes spill loads
  // ptxas info    : Used R registers, used B barriers, M bytes smem, C bytes cmem[0]
  static const std::regex properties(R"(Function properties for (\S+))");
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex compiling(R"(Compiling entry function '([^']+)')");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  std::map<std::string, PtxasFunctionInfo> out;
  std::istringstream in(log);
  std::string line, current;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, compiling) || std::regex_search(line, m, properties)) {
      current = m[1];
      out[current];
    } else if (!current.empty() && std::regex_search(line, m, frame)) {
      PtxasFunctionInfo& f = out[current];
      f.stackFrameBytes = std::stoul(m[1]);
      f.spillStoreBytes = std::stoul(m[2]);
      f.spillLoadBytes = std::stoul(m[3]);
    } else if (!current.empty() && std::regex_search(line, m, used)) {
      PtxasFunctionInfo& f = out[current];
      f.registers = std::stoul(m[1]);
      if (std::regex_search(line, m, smem)) f.sharedBytes = std::stoull(m[1]);
    }
  }
  return out;
}

std::map<std::string, InstructionMix> countPtxInstructions(const std::string& ptx) {
  static const std::regex function(R"(\.(entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*))");
  std::map<std::string, InstructionMix> out;
  std::istringstream in(ptx);
  std::string line;
  InstructionMix* current = nullptr;
  std::smatch m;
  while (std::getline(in, line)) {
    size_t comment = line.find("//");
    if (comment != std::string::npos) line.resize(comment);
    if (std::regex_search(line, m, function)) {
      current = &out[m[2]];
      continue;
    }
    if (!current) continue;
    // The mnemonic is the first word of an instruction, after an optional predicate (@p).
    size_t at = line.find_first_not_of(" \t");
    if (at == std::string::npos) continue;
    if (line[at] == '@') at = line.find_first_of(" \t", at), at = line.find_first_not_of(" \t", at);
    if (at == std::string::npos) continue;
    std::string op = line.substr(at, line.find_first_of(" \t;", at) - at);
    auto starts = [&](const char* p) { return op.rfind(p, 0) == 0; };
    if (starts("mma.sync"))
      ++current->mma;
    else if (starts("wgmma.mma_async"))
      ++current->wgmma;
    else if (starts("cp.async.bulk") && !starts("cp.async.bulk.commit_group") && !starts("cp.async.bulk.wait_group"))
      ++current->tma;
    else if (starts("cp.async.ca") || starts("cp.async.cg"))
      ++current->cpAsync;
    else if (starts("ldmatrix"))
      ++current->ldmatrix;
  }
  return out;
}

}  // namespace tessera::codegen
