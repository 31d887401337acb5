"""Back-ends: descgen's tables and facts written out for other languages (C++/CUDA headers...)."""
