#!/usr/bin/env python3
"""Prints the NVRTC library a Python install ships (nvidia-cuda-nvrtc's, or
PyTorch's own), for TESSEL_NVRTC_LIBRARY on a machine without the toolkit;
prints nothing when there is none."""
import glob
import os
import site

roots = site.getsitepackages() + [site.getusersitepackages()]
patterns = [os.path.join("nvidia", "**", "libnvrtc.so*"), os.path.join("torch", "lib", "libnvrtc*.so*")]
hits = sorted(p for r in roots for pattern in patterns for p in glob.glob(os.path.join(r, pattern), recursive=True)
              if "builtins" not in os.path.basename(p))
print(hits[0] if hits else "")
