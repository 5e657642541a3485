#include "tools/tesserac/DepFile.h"

#include <fstream>

namespace tessera {

namespace {

// Make's quoting: spaces and '#' take a backslash, '$' doubles (GNU make and Ninja agree).
std::string escape(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '#') out += '\\';
    if (c == '$') out += '$';
    out += c;
  }
  return out;
}

}  // namespace

std::string depFileText(const std::vector<std::string>& targets, const std::vector<std::string>& deps, bool phony) {
  std::string text;
  for (size_t i = 0; i < targets.size(); ++i) text += (i ? " " : "") + escape(targets[i]);
  text += ":";
  for (const std::string& d : deps) text += " \\\n  " + escape(d);
  text += "\n";
  if (phony)  // every dependency but the input itself, as clang does
    for (size_t i = 1; i < deps.size(); ++i) text += "\n" + escape(deps[i]) + ":\n";
  return text;
}

bool writeDepFile(const DriverOptions& opts, const std::string& defaultOutput, const std::vector<std::string>& deps,
                  std::string& error) {
  if (!opts.depFile) return true;
  std::string path = opts.depFilePath;
  if (path.empty()) {
    size_t slash = defaultOutput.find_last_of('/');
    size_t dot = defaultOutput.find_last_of('.');
    path = (dot == std::string::npos || (slash != std::string::npos && dot < slash) ? defaultOutput
                                                                                    : defaultOutput.substr(0, dot)) +
           ".d";
  }
  std::vector<std::string> targets = opts.depTargets;
  if (targets.empty()) targets.push_back(defaultOutput);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << depFileText(targets, deps, opts.depPhony);
  if (!f.flush()) {
    error = "cannot write the dependency file '" + path + "'";
    return false;
  }
  return true;
}

}  // namespace tessera
