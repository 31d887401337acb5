"""Back-ends: descgen's words, tables and facts written out for other languages: run-time descriptor
functions (C++, C, PTX, Python) and the checked C++/CUDA header."""
