#!/usr/bin/env bash
# The Spack package (packaging/spack/.../package.py) where Spack cannot run (CI): imported against
# a small stub of the Spack API it uses, its variants must map to configure options that exist
# (`configure --help`), each variant must change the configure line, and it must depend on what
# configure needs. docs/INSTALL.md has the run with a real Spack.
source "${HPCNN_SRCDIR:?}/tests/script_lib.sh"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
"$HPCNN_SRCDIR/configure" --help > "$out/help.txt" || { echo "FAIL: configure --help"; exit 1; }
stub=$out/stub
mkdir -p "$stub/spack" "$stub/spack_repo/builtin/build_systems"
touch "$stub/spack/__init__.py" "$stub/spack_repo/__init__.py" "$stub/spack_repo/builtin/__init__.py" \
  "$stub/spack_repo/builtin/build_systems/__init__.py"
# The directives record what they are given; the rest is what configure_args and the tests touch.
cat > "$stub/spack/package.py" <<'EOF'
import os
directives = []
def _record(kind):
    return lambda *args, **kwargs: directives.append((kind, args, kwargs))
version, variant, depends_on, conflicts = (_record(k) for k in ("version", "variant", "depends_on", "conflicts"))
join_path = os.path.join
def which(*names, **kwargs): return None
class Executable:
    def __init__(self, path): self.path = path
class EnvironmentModifications: pass
__all__ = ["version", "variant", "depends_on", "conflicts", "join_path", "which", "Executable",
           "EnvironmentModifications", "directives"]
EOF
cat > "$stub/spack_repo/builtin/build_systems/autotools.py" <<'EOF'
class AutotoolsPackage:
    def enable_or_disable(self, name):
        return [("--enable-" if self.spec.satisfies("+" + name) else "--disable-") + name]
EOF
cat > "$stub/spack_repo/builtin/build_systems/cuda.py" <<'EOF'
from spack.package import variant
variant("cuda", default=False, description="CUDA")
variant("cuda_arch", default="none", description="compute capabilities", multi=True)
class CudaPackage:
    pass
EOF
PYTHONPATH=$stub python3 - "$HPCNN_SRCDIR/packaging/spack/spack_repo/hpcnn/packages/hpcnn/package.py" "$out/help.txt" <<'EOF' || fail=1
import importlib.util, itertools, re, sys
import spack.package as sp
spec_ = importlib.util.spec_from_file_location("hpcnn_package", sys.argv[1])
module = importlib.util.module_from_spec(spec_)
spec_.loader.exec_module(module)
help_text = open(sys.argv[2]).read()
failures = []

class Value:
    def __init__(self, value): self.value = value
class Dep:
    def __init__(self, name): self.prefix = "/deps/" + name
class Spec:
    def __init__(self, on): self.on = on; self.variants = {"cuda_arch": Value(("80", "90"))}
    def satisfies(self, text): return text.startswith("+") and text[1:] in self.on
    def __getitem__(self, name): return Dep(name)

variants = sorted(a[0] for k, a, _ in sp.directives if k == "variant" and a[0] != "cuda_arch")
deps = {a[0].split("@")[0] for k, a, _ in sp.directives if k == "depends_on"}
print("variants:", " ".join(variants))
for need in ("mpi", "hdf5", "zlib-api", "onednn", "openblas", "eigen", "cudnn", "nccl", "autoconf", "automake"):
    if need not in deps: failures.append(f"no depends_on('{need}')")

def configure_line(on):
    pkg = object.__new__(module.Hpcnn)
    pkg.spec, pkg.run_tests = Spec(on), False
    return pkg.configure_args()

for on in itertools.product([False, True], repeat=len(variants)):
    line = configure_line({v for v, o in zip(variants, on) if o})
    for arg in line:
        m = re.match(r"--(with|without|enable|disable)-([a-z0-9-]+)", arg)
        if m:
            name = m.group(2)
            if not re.search(rf"--(with|enable|disable)-{name}\b", help_text):
                failures.append(f"{arg}: configure has no --with-{name} / --enable-{name}")
        elif re.match(r"[A-Z_]+=", arg):
            if arg.split("=")[0] not in help_text: failures.append(f"{arg}: not a configure variable")
        else:
            failures.append(f"{arg}: not a configure option")
for v in variants:
    off, on = configure_line(set()), configure_line({v})
    if off == on: failures.append(f"variant {v} does not change the configure line")
    else: print(f"+{v}:", " ".join(sorted(set(on) - set(off))))
for f in failures: print("FAIL:", f)
sys.exit(1 if failures else 0)
EOF
exit $fail
