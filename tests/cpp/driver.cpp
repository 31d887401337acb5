// The host side of the differential test (tests/test_cpp_header.py): reads records
// (tests/cpp/differential.py) and writes one 32-bit digest per record; with --explain I, prints
// record I's codes instead; with --coverage, every code reported; with --bench, times the validators.
#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "differential.hpp"

using descgen_differential::Record;

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: driver RECORDS OUT | driver RECORDS --explain I | --coverage | --bench REPEATS\n");
        return 2;
    }
    std::FILE* in = std::fopen(argv[1], "rb");
    if (!in) { std::perror(argv[1]); return 2; }
    std::vector<Record> records;
    Record x;
    while (std::fread(&x, sizeof x, 1, in) == 1) records.push_back(x);
    std::fclose(in);
    descgen::tcgen05::Report r;
    if (std::strcmp(argv[2], "--explain") == 0) {
        std::size_t i = std::strtoull(argv[3], nullptr, 10);
        descgen_differential::run(records.at(i), r);
        std::printf("ok=%d", r.ok() ? 1 : 0);
        for (int j = 0; j < r.count; ++j) std::printf(" %s", descgen::tcgen05::code_str(r.item[j].code));
        std::printf("\n");
        return 0;
    }
    if (std::strcmp(argv[2], "--coverage") == 0) {  // every code some record reports, one a line
        static bool seen[descgen::tcgen05::CODE_COUNT] = {};
        for (const Record& rec : records) {
            r.count = r.errors = 0;
            descgen_differential::run(rec, r);
            for (int j = 0; j < r.count; ++j) seen[static_cast<int>(r.item[j].code)] = true;
        }
        for (int c = 0; c < descgen::tcgen05::CODE_COUNT; ++c)
            if (seen[c]) std::printf("%s\n", descgen::tcgen05::CODE_STR[c]);
        return 0;
    }
    if (std::strcmp(argv[2], "--bench") == 0) {  // ns per record: the validators, and a hand-written baseline
        int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
        double best = 1e30, base = 1e30;
        std::uint64_t sink = 0;
        for (int k = 0; k < repeats; ++k) {
            std::clock_t t0 = std::clock();  // (CPU time: the machine may be shared)
            for (const Record& rec : records) {
                r.count = r.errors = 0;
                descgen_differential::run(rec, r);
                sink += static_cast<std::uint64_t>(r.count);
            }
            std::clock_t t1 = std::clock();
            for (const Record& rec : records) {  // baseline: the shifts and masks of a hand-written decode
                std::uint64_t w = rec.w0;
                sink += ((w >> 17) & 63) + ((w >> 24) & 31) + ((w >> 7) & 7) + ((w >> 10) & 7) + ((w >> 4) & 3) + (w & 3) +
                        ((w >> 2) & 1) + ((w >> 15) & 3) + (rec.w2 >> 61) + ((rec.w2 >> 49) & 7);
            }
            std::clock_t t2 = std::clock();
            best = std::min(best, static_cast<double>(t1 - t0) / CLOCKS_PER_SEC);
            base = std::min(base, static_cast<double>(t2 - t1) / CLOCKS_PER_SEC);
        }
        std::printf("validators_ns=%.2f\nbaseline_ns=%.2f\nrecords=%zu\nsink=%llu\n", best * 1e9 / records.size(),
                    base * 1e9 / records.size(), records.size(), static_cast<unsigned long long>(sink));
        return 0;
    }
    std::vector<std::uint32_t> out(records.size());
    for (std::size_t i = 0; i < records.size(); ++i) {
        r.count = r.errors = 0;
        descgen_differential::run(records[i], r);
        out[i] = descgen_differential::digest(r);
    }
    std::FILE* o = std::fopen(argv[2], "wb");
    if (!o || std::fwrite(out.data(), 4, out.size(), o) != out.size()) { std::perror(argv[2]); return 2; }
    std::fclose(o);
    return 0;
}
