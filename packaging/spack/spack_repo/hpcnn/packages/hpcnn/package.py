# Spack package of hpcnn (issue 18). UNVERIFIED: written without a Spack to try it on; see
# docs/INSTALL.md. `spack repo add packaging/spack/spack_repo/hpcnn`, then `spack install hpcnn`.

from spack_repo.builtin.build_systems.autotools import AutotoolsPackage
from spack_repo.builtin.build_systems.cuda import CudaPackage

from spack.package import *


class Hpcnn(AutotoolsPackage, CudaPackage):
    """MPI-native C++ benchmark suite for deep learning: training and inference throughput,
    data-parallel scaling, allreduce and CPU compute libraries, with HDF5 result files."""

    homepage = "https://github.com/hpcnn/hpcnn"
    # Placeholder until the project is published: use `spack dev-build` in a checkout, or
    # `spack install hpcnn@main` with a mirror of a `make dist` tarball.
    git = "https://github.com/hpcnn/hpcnn.git"

    version("main", branch="main")

    variant("dnnl", default=True, description="dnnl backend (oneDNN)")
    variant("openblas", default=True, description="openblas backend and SGEMM library (OpenBLAS)")
    variant("eigen", default=True, description="eigen backend and SGEMM library (Eigen 3)")
    variant("native", default=False, description="tune for the build machine (-march=native)")

    depends_on("cxx", type="build")
    # A git checkout has no configure: autoreconf needs these.
    depends_on("autoconf", type="build", when="@main")
    depends_on("automake", type="build", when="@main")
    depends_on("m4", type="build", when="@main")

    depends_on("mpi")
    depends_on("hdf5@1.10:1.14")
    depends_on("zlib-api")
    depends_on("onednn@2:3", when="+dnnl")
    depends_on("openblas", when="+openblas")
    depends_on("eigen@3", when="+eigen")
    # The cuda backend is built only with CUDA, cuDNN and NCCL together (configure.ac).
    depends_on("cudnn", when="+cuda")
    depends_on("nccl", when="+cuda")
    depends_on("googletest", type="test")
    depends_on("cmake", type="test")  # ctest runs `make check`

    def autoreconf(self, spec, prefix):
        which("autoreconf")("-fi")

    def configure_args(self):
        spec = self.spec
        args = [
            f"--with-mpi={spec['mpi'].prefix}",
            f"--with-hdf5={spec['hdf5'].prefix}",
            f"--with-zlib={spec['zlib-api'].prefix}",
            "--without-gbench",
        ]
        args += self.enable_or_disable("native")
        for variant, dep in (("dnnl", "onednn"), ("openblas", "openblas"), ("eigen", "eigen")):
            if spec.satisfies(f"+{variant}"):
                args.append(f"--with-{variant}={spec[dep].prefix}")
            else:
                args.append(f"--without-{variant}")
        if spec.satisfies("+cuda"):
            args += [
                f"--with-cuda={spec['cuda'].prefix}",
                f"--with-cudnn={spec['cudnn'].prefix}",
                f"--with-nccl={spec['nccl'].prefix}",
            ]
        else:
            args += ["--without-cuda", "--without-cudnn", "--without-nccl"]
        args.append(f"--with-gtest={spec['googletest'].prefix}" if self.run_tests else "--without-gtest")
        return args

    def setup_run_environment(self, env: EnvironmentModifications) -> None:
        env.set("HPCNN_ROOT", self.prefix)
        env.set("HPCNN_JOBSCRIPTS", join_path(self.prefix.share, "hpcnn", "jobscripts"))
        env.set("HPCNN_DOCDIR", join_path(self.prefix.share, "doc", "hpcnn"))

    def mpi_launcher(self):
        commands = ["mpirun", "mpiexec"]
        return which(*commands, path=[self.spec["mpi"].prefix.bin]) or which(*commands)

    def test_version(self):
        """hpcnn-train --version names this version"""
        out = which(self.prefix.bin.join("hpcnn-train"))("--version", output=str.split, error=str.split)
        assert "hpcnn" in out

    def test_allreduce(self):
        """one-rank allreduce through the MPI launcher, every element checked"""
        self.mpi_launcher()("-np", "1", self.prefix.bin.join("hpcnn-allreduce"), "--sizes", "4,1K",
                            "--exchange", "mpi", "--iters", "2", "--warmup", "1", "--output", "allreduce")

    def test_train(self):
        """tiny training point through the MPI launcher, read back by hpcnn-summary"""
        self.mpi_launcher()("-np", "1", self.prefix.bin.join("hpcnn-train"), "--model", "lenet5",
                            "--backend", "reference", "--dataset", "mnist", "--batch", "4",
                            "--iters", "2", "--warmup", "1", "--output", "train")
        out = which(self.prefix.bin.join("hpcnn-summary"))("--format", "csv", "train",
                                                          output=str.split, error=str.split)
        assert "lenet5" in out
