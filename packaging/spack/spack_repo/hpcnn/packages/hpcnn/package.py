# Spack package of hpcnn, for Spack 1.x (package API v2, spack_repo layout).
# `spack repo add packaging/spack/spack_repo/hpcnn`; docs/INSTALL.md has the commands and the
# output of an install and `spack test run` with Spack 1.1.0.
#
# hpcnn is not published yet, so no version here can be downloaded: `git` names where the
# repository is to be published (it does not exist yet). Install from a checkout with
# `spack dev-build hpcnn@main` (or `spack develop`), or from a `make dist` tarball with a version
# line of your own: version("0.1.0", sha256="...", url="file:///path/hpcnn-0.1.0.tar.gz").

import os

from spack_repo.builtin.build_systems.autotools import AutotoolsPackage
from spack_repo.builtin.build_systems.cuda import CudaPackage

from spack.package import *


class Hpcnn(AutotoolsPackage, CudaPackage):
    """MPI-native C++ benchmark suite for deep learning: training and inference throughput,
    data-parallel scaling, allreduce and CPU compute libraries, with HDF5 result files."""

    homepage = "https://github.com/hpcnn/hpcnn"
    # NOT PUBLISHED YET: this repository does not exist; see the top of this file.
    git = "https://github.com/hpcnn/hpcnn.git"

    version("main", branch="main")

    variant("dnnl", default=True, description="dnnl backend (oneDNN)")
    variant("openblas", default=True, description="openblas backend and SGEMM library (OpenBLAS)")
    variant("eigen", default=True, description="eigen backend and SGEMM library (Eigen 3)")
    variant("simgrid", default=False, description="hpcnn-simulate's simulator (SimGrid's SMPI)")
    # Spack chooses the target's flags; configure's default -march=native would override them.
    variant("native", default=False, description="tune for the build machine (-march=native)")

    depends_on("cxx", type="build")
    # A git checkout has no configure (a `make dist` tarball has): autoreconf needs these.
    depends_on("autoconf@2.69:", type="build", when="@main")
    depends_on("automake@1.16:", type="build", when="@main")
    depends_on("m4", type="build", when="@main")
    depends_on("pkgconfig", type="build")

    depends_on("mpi")
    depends_on("hdf5@1.10:1.14")
    depends_on("zlib-api")
    depends_on("onednn@2.6:3", when="+dnnl")
    depends_on("openblas", when="+openblas")
    depends_on("eigen@3", when="+eigen")
    # SMPI (smpicxx, smpirun) is part of a default SimGrid build.
    depends_on("simgrid@3.30:", when="+simgrid")
    # The cuda backend is built only with CUDA, cuDNN and NCCL together (configure.ac).
    depends_on("cudnn", when="+cuda")
    depends_on("nccl", when="+cuda")
    conflicts("cuda_arch=none", when="+cuda", msg="+cuda needs cuda_arch=<compute capability>")
    depends_on("googletest", type="test")
    depends_on("cmake", type="test")  # ctest runs `make check`

    def autoreconf(self, spec, prefix):
        # Only a checkout: a release tarball's configure is used as it is.
        if not os.path.exists(join_path(self.stage.source_path, "configure")):
            Executable(spec["autoconf"].prefix.bin.autoreconf)("-fi")

    def configure_args(self):
        # MPI: configure takes its flags from $MPICC, which the mpi provider sets to its wrapper
        # in the build environment (--with-mpi is the fallback).
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
        if spec.satisfies("+simgrid"):
            args.append(f"--with-simgrid={spec['simgrid'].prefix}")
        else:
            args.append("--without-simgrid")
        if spec.satisfies("+cuda"):
            args += [
                f"--with-cuda={spec['cuda'].prefix}",
                f"--with-cudnn={spec['cudnn'].prefix}",
                f"--with-nccl={spec['nccl'].prefix}",
                "CUDA_ARCH=" + " ".join(spec.variants["cuda_arch"].value),
            ]
        else:
            args += ["--without-cuda", "--without-cudnn", "--without-nccl"]
        if self.run_tests:
            args.append(f"--with-gtest={spec['googletest'].prefix}")
        else:
            args.append("--without-gtest")
        return args

    def setup_run_environment(self, env: EnvironmentModifications) -> None:
        env.set("HPCNN_ROOT", self.prefix)
        env.set("HPCNN_JOBSCRIPTS", join_path(self.prefix.share, "hpcnn", "jobscripts"))
        env.set("HPCNN_DOCDIR", join_path(self.prefix.share, "doc", "hpcnn"))

    def mpi_launcher(self):
        commands = ["mpirun", "mpiexec"]
        return which(*commands, path=[self.spec["mpi"].prefix.bin]) or which(*commands)

    def run_one_rank(self, program, *args, **kwargs):
        """program on one rank through the MPI launcher"""
        launch = ["-np", "1"]
        # Open MPI refuses root (containers, CI) unless told; Spack unsets every *_ROOT
        # variable, OMPI_ALLOW_RUN_AS_ROOT included, so the option is the only way through.
        if self.spec["mpi"].name == "openmpi" and os.geteuid() == 0:
            launch.append("--allow-run-as-root")
        return self.mpi_launcher()(*launch, self.prefix.bin.join(program), *args, **kwargs)

    def test_version(self):
        """hpcnn-train --version names the package"""
        out = which(self.prefix.bin.join("hpcnn-train"))("--version", output=str.split, error=str.split)
        assert "hpcnn" in out, f"hpcnn-train --version printed {out!r}"

    def test_allreduce(self):
        """one-rank allreduce through the MPI launcher, every element checked"""
        out = self.run_one_rank(
            "hpcnn-allreduce", "--sizes", "4,1K",
            "--exchange", "mpi", "--iters", "2", "--warmup", "1", "--output", "allreduce",
            output=str.split, error=str.split,
        )
        # hpcnn-allreduce exits 1 on any wrong element; the count line says both points ran.
        assert "points: 2 ok" in out, f"hpcnn-allreduce printed {out!r}"

    def test_train(self):
        """tiny training point through the MPI launcher, read back by hpcnn-summary"""
        self.run_one_rank(
            "hpcnn-train", "--model", "lenet5",
            "--backend", "reference", "--dataset", "mnist", "--batch", "4",
            "--iters", "2", "--warmup", "1", "--output", "train", "--quiet",
        )
        out = which(self.prefix.bin.join("hpcnn-summary"))(
            "--format", "csv", "train", output=str.split, error=str.split
        )
        assert "hpcnn-train,lenet5,reference,mnist,4," in out, f"hpcnn-summary printed {out!r}"
