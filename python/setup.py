"""Builds the package's compiler driver (tessel._driver) with the Tessel checkout's CMake build.

`pip install ./python` from a checkout configures (if needed) and builds the target
tessel_python_driver in $TESSEL_BUILD_DIR (default: the checkout's build/, so an existing build
is reused) for the interpreter running pip, and installs the module with the package. The ctypes
loader (tessel.load) needs none of it: TESSEL_NO_DRIVER=1 installs the loader alone."""
import os
import shutil
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        root = Path(__file__).resolve().parent.parent
        if not (root / "CMakeLists.txt").is_file():
            raise RuntimeError(f"{root}: not a Tessel checkout; the driver is built from one")
        build = Path(os.environ.get("TESSEL_BUILD_DIR", root / "build")).resolve()
        module_dir = build / "python" / "tessel"
        built = list(module_dir.glob("_driver*" + EXTENSION_SUFFIXES[0]))
        configure = ["cmake", "-S", str(root), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"]
        if not (build / "CMakeCache.txt").exists():
            configure += ["-G", "Ninja"] if shutil.which("ninja") else []
        if not built:  # none yet for this interpreter's ABI: configure for it
            configure.append(f"-DPython_EXECUTABLE={sys.executable}")
        env = dict(os.environ, CCACHE_BASEDIR=os.environ.get("CCACHE_BASEDIR", str(root)))
        subprocess.run(configure, check=True, env=env, stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", str(build), "--target", "tessel_python_driver"], check=True, env=env)
        built = list(module_dir.glob("_driver*" + EXTENSION_SUFFIXES[0]))
        if not built:
            raise RuntimeError(f"the build made no tessel._driver for {sys.executable} in {module_dir} "
                               "(pybind11-dev and Python's headers are needed: see the README)")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


driver = [] if os.environ.get("TESSEL_NO_DRIVER") == "1" else [Extension("tessel._driver", sources=[])]
setup(ext_modules=driver, cmdclass={"build_ext": CMakeBuild})
