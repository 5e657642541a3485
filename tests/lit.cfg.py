# lit configuration for the compiler-output tests (tests/lit/<stage>/...) and the conformance
# tests (tests/conformance/). Substitutions: %tesserac, %tessera-opt, %tessera-lsp, %src_root,
# %{tools} (the directory of the tools), FileCheck, not.
import os
import lit.formats

config.name = "Tessera"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tessera", ".test", ".tir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tessera_obj_root, "tests")
config.excludes = ["unit", "fuzz", "exec", "package", "Inputs", "CMakeLists.txt"]

tools = config.tessera_tools_dir
config.substitutions.append(("%tesserac", os.path.join(tools, "tesserac")))
config.substitutions.append(("%tessera-opt", os.path.join(tools, "tessera-opt")))
config.substitutions.append(("%src_root", config.tessera_src_root))
config.substitutions.append(("%{tools}", tools))
config.environment["PATH"] = os.pathsep.join(
    [tools, config.llvm_tools_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
# Diagnostics must not depend on the terminal.
config.environment["TERM"] = "dumb"
if config.have_cuda:
    config.available_features.add("cuda")
if os.path.isdir(os.path.join(config.tessera_src_root, "..", "shared", "spec")):
    config.available_features.add("spec")
config.substitutions.append(("%tessera-lsp", os.path.join(tools, "tessera-lsp")))
