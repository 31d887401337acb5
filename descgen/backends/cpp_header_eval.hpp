// The evaluator of descgen_tcgen05.hpp (descgen/backends/cpp_header_eval.hpp, appended to the
// generated tables by descgen.backends.cpp_header). It holds no legal value and no rule of its own:
// field checks are generic (bit ranges, legal raw runs), and the rules' functions and the tables
// they read are generated from each rule's declaration in tables/rules.toml at the @RULES@ line
// (descgen.backends.cpp_rules); tests/test_cpp_header.py checks them against the Python API over a
// million words and contexts.

/** A finding: its code, severity (0 error, 1 warning, 2 info), the word it is about (role: 0 the
 *  word itself, 1 a_desc, 2 b_desc, 3 zcm), the field and a value (raw or logical). */
struct Finding {
    Code code;
    std::uint8_t severity;
    std::uint8_t role;
    const char* field;
    long long value;
};

/** What a validator found, in the Python API's order (field checks in bit order, then the rules). */
struct Report {
    static constexpr int capacity = 96;
    int count = 0;
    int errors = 0;
    Finding item[capacity];
    DESCGEN_HD bool ok() const { return errors == 0; }
    DESCGEN_HD void add(Code code, int severity, const char* field, long long value, int role = 0) {
        if (severity == 0) ++errors;
        if (count < capacity) item[count++] = Finding{code, static_cast<std::uint8_t>(severity), static_cast<std::uint8_t>(role), field, value};
    }
};

DESCGEN_HD inline const char* code_str(Code c) { return CODE_STR[static_cast<int>(c)]; }
/** The rule sentence and PTX source of a code (for printing). */
DESCGEN_HD inline const char* code_rule(Code c) { return CODE_RULE[static_cast<int>(c)]; }
DESCGEN_HD inline const char* name_str(int id) { return id >= 0 && id < NAME_COUNT ? NAME_STR[id] : "?"; }

namespace detail {

constexpr long long NONE = -1;

#ifdef DESCGEN_DEBUG
/** DESCGEN_CHECK's report for a check whose code, field and allowed values are known at run time
 *  only (a report's finding, an encoder's field): the same line, then the same trap. */
DESCGEN_HD inline void fail(const char* code, const char* field, long long value, const char* allowed) {
    const unsigned long long v = static_cast<unsigned long long>(value);
#if defined(__CUDA_ARCH__)
    printf("descgen: %s: %s = %llu (0x%llx), allowed %s\n", code, field, v, v, allowed);
    __trap();
#else
    std::fprintf(stderr, "descgen: %s: %s = %llu (0x%llx), allowed %s\n", code, field, v, v, allowed);
    std::abort();
#endif
}
#endif

/** A word's fields decoded: per slot its logical value (an enum's name id, a flag's 0/1, a uint's
 *  value; -1 for an unknown enum code) and whether the plan has it. */
struct Values {
    long long v[MAX_SLOTS];
    std::uint32_t present;
    DESCGEN_HD long long get(int slot) const { return v[slot]; }  // (a slot the plan lacks holds NONE)
    DESCGEN_HD bool has(int slot) const { return (present >> slot) & 1u; }
};

DESCGEN_HD constexpr bool in_runs(std::uint32_t raw, int first, int n) {
    for (int i = first; i < first + n; ++i) {
        const Run& r = RUNS[i];
        if (raw >= r.lo && raw <= r.hi && (raw - r.lo) % r.step == 0) return true;
    }
    return false;
}

DESCGEN_HD constexpr std::uint64_t field_mask(const FieldSpec& f) {
    return f.width >= 64 ? ~0ull : ((1ull << f.width) - 1);
}

/** Report::add out of line: the validators' findings, so that each plan's reader and each kind's
 *  validate_idesc stay small (a finding is the rare path; a TU compiles the faster). */
DESCGEN_HD DESCGEN_NOINLINE inline void add_finding(Report& r, Code code, int severity, const char* field, long long value, int role) {
    r.add(code, severity, field, value, role);
}

/** Read field I of the tables (a compile-time index: its shifts, masks and legal values are
 *  constants) and the fields after it up to END. */
template <int I, int END>
struct FieldReader {
    DESCGEN_HD static inline void read(std::uint64_t word, Values& out, Report* report, int role) {
        if constexpr (I < END) {
            constexpr FieldSpec f = FIELDS[I];
            const std::uint32_t raw = static_cast<std::uint32_t>((word >> f.lo) & field_mask(f));
            long long value;
            if constexpr (f.type == 2) value = ENUMS[f.enums + raw];
            else if constexpr (f.type == 0) value = (static_cast<long long>(raw) << f.shift) + f.add;
            else value = raw;
            if (report) {
                bool legal;
                if constexpr (f.width <= 6) legal = (f.legal >> raw) & 1u;
                else legal = in_runs(raw, f.runs, f.nruns);
                if (!legal) add_finding(*report, static_cast<Code>(f.code), f.severity, f.name, f.type == 0 ? value : raw, role);
            }
            if constexpr (f.slot >= 0) out.v[f.slot] = value;
            FieldReader<I + 1, END>::read(word, out, report, role);
        }
    }
};

/** The slots plan P has, as a mask. */
template <int P>
DESCGEN_HD constexpr std::uint32_t plan_slots() {
    std::uint32_t mask = 0;
    for (int i = PLANS[P].first; i < PLANS[P].first + PLANS[P].count; ++i)
        if (FIELDS[i].slot >= 0) mask |= 1u << FIELDS[i].slot;
    return mask;
}

/** NONE in the slots from I on that MASK lacks. */
template <std::uint32_t MASK, int I>
DESCGEN_HD inline void clear_absent(Values& out) {
    if constexpr (I < MAX_SLOTS) {
        if constexpr (!((MASK >> I) & 1u)) out.v[I] = NONE;
        clear_absent<MASK, I + 1>(out);
    }
}

/** Plan P's reader when plan == P, else the next plan's, up to plan END (excluded). */
template <int P, int END>
DESCGEN_HD inline void read_plan_from(int plan, std::uint64_t word, Values& out, Report* report, int role) {
    if constexpr (P < END) {
        if (plan == P) {
            constexpr std::uint32_t slots = plan_slots<P>();
            out.present = slots;
            clear_absent<slots, 0>(out);
            FieldReader<PLANS[P].first, PLANS[P].first + PLANS[P].count>::read(word, out, report, role);
        } else {
            read_plan_from<P + 1, END>(plan, word, out, report, role);
        }
    } else {  // (no such plan: nothing)
        out.present = 0;
        for (int i = 0; i < MAX_SLOTS; ++i) out.v[i] = NONE;
    }
}

/** Read every field of a plan (one of FIRST..END-1): the values (a slot the plan lacks: NONE), and
 *  (report != nullptr) each field's own check. */
template <int FIRST, int END>
DESCGEN_HD inline void read_plan(int plan, std::uint64_t word, Values& out, Report* report, int role = 0) {
    read_plan_from<FIRST, END>(plan, word, out, report, role);
}

/** Pack logical values (UNSET: the plan's default) into a word; under DESCGEN_DEBUG each field's
 *  own check runs on the value given. */
DESCGEN_HD constexpr std::uint64_t encode_plan(int plan, const long long* v) {
    const PlanSpec& p = PLANS[plan];
    std::uint64_t word = 0;
    for (int i = p.first; i < p.first + p.count; ++i) {
        const FieldSpec& f = FIELDS[i];
        std::uint64_t raw = 0;
        if (f.type == 4) {
            raw = RUNS[f.runs].lo;  // a constant's one legal value
        } else if (f.slot >= 0) {
            long long x = v[f.slot] != UNSET ? v[f.slot] : PLAN_DEFAULTS[plan * MAX_SLOTS + f.slot];
            if (f.type == 2) {
                for (std::uint32_t r = 0; r < (1u << f.width); ++r)
                    if (ENUMS[f.enums + r] == x) { raw = r; break; }
#ifdef DESCGEN_DEBUG
                if (!(ENUMS[f.enums + raw] == x && in_runs(static_cast<std::uint32_t>(raw), f.runs, f.nruns)))
                    fail(CODE_STR[f.code], f.name, x, f.allowed);
#endif
            } else {
                raw = static_cast<std::uint64_t>((x - f.add) >> f.shift) & field_mask(f);
#ifdef DESCGEN_DEBUG
                if (!(x != UNSET && (static_cast<long long>(raw) << f.shift) + f.add == x &&
                      in_runs(static_cast<std::uint32_t>(raw), f.runs, f.nruns)))
                    fail(CODE_STR[f.code], f.name, x, f.allowed);
#endif
            }
        }
        word |= raw << f.lo;
    }
    return word;
}

// -- the rules (generated from each rule's declaration: descgen/backends/cpp_rules.py) ------------------

/** A table's entry (tables the rules read, descgen/rules/tables.py): its key's index in the product
 *  of the key domains, and its value (a set: a mask over the table's elements). */
struct TableEntry { std::uint32_t key; long long value; };

/** The entry of key index ``key`` (-1: a key part outside its domain), or nullptr. */
DESCGEN_HD inline const TableEntry* find_entry(const TableEntry* t, int n, long long key) {
    if (key < 0) return nullptr;
    int lo = 0, hi = n;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (t[mid].key < key) lo = mid + 1; else hi = mid;
    }
    return lo < n && t[lo].key == key ? &t[lo] : nullptr;
}

/** acc * n + the position of x among a key domain's n codes (-1 once a part is outside its domain). */
DESCGEN_HD inline long long index_in(long long acc, const long long* codes, int n, long long x) {
    if (acc < 0) return -1;
    for (int i = 0; i < n; ++i)
        if (codes[i] == x) return acc * n + i;
    return -1;
}

DESCGEN_HD inline long long entry_value(const TableEntry* e) { return e ? e->value : NONE; }

/** Whether a set entry (a mask over the elements) holds x (no entry: the empty set). */
DESCGEN_HD inline bool set_has(const TableEntry* e, const long long* elements, int n, long long x) {
    if (!e) return false;
    for (int i = 0; i < n; ++i)
        if (elements[i] == x) return (e->value >> i) & 1;
    return false;
}

DESCGEN_HD inline long long min_of(long long a, long long b) { return a < b ? a : b; }
DESCGEN_HD inline long long max_of(long long a, long long b) { return a > b ? a : b; }
DESCGEN_HD inline long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }
/** A name id's integer (an enum member that is a number: max shift 0/8/16/32), or NONE. */
DESCGEN_HD inline long long name_int(long long id) { return id >= 0 && id < NAME_COUNT ? NAME_INT[id] : NONE; }

/** The MMA's K of an idesc's values under its kind (Table 39; -1: K = 96 with sparsity). */
DESCGEN_HD inline long long mma_k_of(const Values& d, int kind) {
    const long long sparse = d.get(idesc_slot::sparse), k96 = name_int(d.get(idesc_slot::k_dim)) == 96;
    return k96 && sparse == 1 ? -1 : k96 ? 96 : KS[kind * 2 + (sparse == 1 ? 1 : 0)];
}

/** context(): ws not given is false under a cta_group tcgen05.mma.ws does not exist with. */
DESCGEN_HD inline Context normalized(Context ctx) {
    if (ctx.ws < 0 && ctx.cta_group > 0 && !((WS_CTA_GROUPS >> ctx.cta_group) & 1u)) ctx.ws = 0;
    return ctx;
}

// @RULES@

}  // namespace detail

namespace detail {
/** validate_idesc for kind K: the kind's plan read, then its rules, with every per-kind table entry
 *  (its fields, ROWS_KIND, KS, TYPES_BAD...) a constant. */
template <int K>
DESCGEN_HD inline void validate_idesc_kind(std::uint32_t word, const Context& ctx, Report& r) {
    Values d;
    read_plan_from<IDESC_PLAN0 + K, IDESC_PLAN0 + K + 1>(IDESC_PLAN0 + K, word, d, &r, 0);
    idesc_rules(d, K, mma_k_of(d, K), normalized(ctx), r);
}

/** validate_idesc_kind<kind>, for kind K or a later one. */
template <int K>
DESCGEN_HD inline void validate_idesc_from(int kind, std::uint32_t word, const Context& ctx, Report& r) {
    if constexpr (K < KIND_COUNT) {
        if (kind == K) validate_idesc_kind<K>(word, ctx, r);
        else validate_idesc_from<K + 1>(kind, word, ctx, r);
    }
}
}  // namespace detail

/** Validate an instruction descriptor under kind and context (validate_idesc): every field check
 *  and every rule whose context is given, the same codes in the same order as the Python API. */
DESCGEN_HD inline void validate_idesc(std::uint32_t word, Kind kind, const Context& ctx, Report& r) {
    detail::validate_idesc_from<0>(static_cast<int>(kind), word, ctx, r);
}

/** Validate a shared memory descriptor (validate_smem: context arch, pattern_start). */
DESCGEN_HD inline void validate_smem(std::uint64_t word, const Context& ctx, Report& r) {
    detail::Values d;
    detail::read_plan<SMEM_PLAN, SMEM_PLAN + 1>(SMEM_PLAN, word, d, &r);
    detail::smem_rules(d, ctx, r, 0);
}

/** Validate a zero-column mask descriptor (validate_zcm: context m, n, ws). */
DESCGEN_HD inline void validate_zcm(std::uint64_t word, const Context& ctx, Report& r) {
    detail::Values d;
    detail::read_plan<ZCM_PLAN, ZCM_PLAN + 1>(ZCM_PLAN, word, d, &r);
    detail::zcm_rules(d, ctx, r, 0);
}

/** Validate a tensor memory address (validate_taddr: context warp, alloc_columns, alloc_base). */
DESCGEN_HD inline void validate_taddr(std::uint32_t word, const Context& ctx, Report& r) {
    detail::Values d;
    detail::read_plan<TADDR_PLAN, TADDR_PLAN + 1>(TADDR_PLAN, word, d, &r);
    detail::taddr_rules(d, ctx, r);
}

/** Check one tcgen05.mma (check_mma): the idesc under ctx (cta_group, ws, sp, scale_vec, a_tmem,
 *  arch), A's (a_desc; nullptr: A in tensor memory) and B's descriptors (arch, their pattern starts,
 *  -1: not given), the zero-column mask (zcm; nullptr: none) under the idesc's M and N and ctx.ws as
 *  given, then the rules between the words. Findings of A, B, zcm have role 1, 2, 3. */
DESCGEN_HD inline void check_mma(std::uint32_t idesc, Kind kind, const std::uint64_t* a_desc, std::uint64_t b_desc,
                                 const std::uint64_t* zcm, const Context& ctx, Report& r,
                                 long long a_pattern_start = -1, long long b_pattern_start = -1) {
    Context c = ctx;
    if (c.a_tmem < 0 && a_desc) c.a_tmem = 0;
    Context instr;  // the names check_mma's idesc context takes
    instr.cta_group = c.cta_group; instr.ws = c.ws; instr.sp = c.sp; instr.scale_vec = c.scale_vec;
    instr.a_tmem = c.a_tmem; instr.arch = c.arch;
    detail::Values di, da, db;
    detail::read_plan<IDESC_PLAN0, SMEM_PLAN>(IDESC_PLAN0 + static_cast<int>(kind), idesc, di, &r);
    detail::idesc_rules(di, static_cast<int>(kind), detail::mma_k_of(di, static_cast<int>(kind)), detail::normalized(instr), r);
    const detail::Values* desc[2] = {nullptr, &db};  // (A's: nullptr while A is in tensor memory)
    Context smem;
    smem.arch = c.arch;
    if (a_desc) {
        smem.pattern_start = a_pattern_start;
        detail::read_plan<SMEM_PLAN, SMEM_PLAN + 1>(SMEM_PLAN, *a_desc, da, &r, 1);
        detail::smem_rules(da, smem, r, 1);
        desc[0] = &da;
    }
    smem.pattern_start = b_pattern_start;
    detail::read_plan<SMEM_PLAN, SMEM_PLAN + 1>(SMEM_PLAN, b_desc, db, &r, 2);
    detail::smem_rules(db, smem, r, 2);
    if (zcm) {
        Context z;
        z.m = di.get(idesc_slot::m);
        z.n = di.get(idesc_slot::n);
        z.ws = ctx.ws;
        detail::Values dz;
        detail::read_plan<ZCM_PLAN, ZCM_PLAN + 1>(ZCM_PLAN, *zcm, dz, &r, 3);
        detail::zcm_rules(dz, z, r, 3);
    }
    detail::mma_rules(di, static_cast<int>(kind), desc, instr, r);
}

/** Decoded words: each field's logical value (an enum's name id; -1: an unknown code or a field the
 *  kind's layout lacks). */
struct IdescFields { long long v[idesc_slot::count]; DESCGEN_HD long long operator[](int slot) const { return v[slot]; } };
struct SmemFields { long long v[smem_slot::count]; DESCGEN_HD long long operator[](int slot) const { return v[slot]; } };
struct ZcmFields { long long v[zcm_slot::count]; DESCGEN_HD long long operator[](int slot) const { return v[slot]; } };
struct TaddrFields { long long v[taddr_slot::count]; DESCGEN_HD long long operator[](int slot) const { return v[slot]; } };

namespace detail {
template <class Out, int N, int FIRST, int END>
DESCGEN_HD inline Out decoded(int plan, std::uint64_t word) {
    Values d;
    read_plan<FIRST, END>(plan, word, d, nullptr);
    Out out{};
    for (int i = 0; i < N; ++i) out.v[i] = d.get(i);
    return out;
}
}  // namespace detail

/** Decode (fields only; validate_* adds the checks): decode_idesc(word, kind)[idesc_slot::m]. */
DESCGEN_HD inline IdescFields decode_idesc(std::uint32_t word, Kind kind) {
    return detail::decoded<IdescFields, idesc_slot::count, IDESC_PLAN0, SMEM_PLAN>(IDESC_PLAN0 + static_cast<int>(kind), word);
}
DESCGEN_HD inline SmemFields decode_smem(std::uint64_t word) {
    return detail::decoded<SmemFields, smem_slot::count, SMEM_PLAN, SMEM_PLAN + 1>(SMEM_PLAN, word);
}
DESCGEN_HD inline ZcmFields decode_zcm(std::uint64_t word) {
    return detail::decoded<ZcmFields, zcm_slot::count, ZCM_PLAN, ZCM_PLAN + 1>(ZCM_PLAN, word);
}
DESCGEN_HD inline TaddrFields decode_taddr(std::uint32_t word) {
    return detail::decoded<TaddrFields, taddr_slot::count, TADDR_PLAN, TADDR_PLAN + 1>(TADDR_PLAN, word);
}

/** With DESCGEN_DEBUG: the first error of a report printed as DESCGEN_CHECK prints a failed check
 *  (its code, field, value and the rule), then a trap; without it, nothing. */
DESCGEN_HD inline void require_ok(const Report& r) {
#ifdef DESCGEN_DEBUG
    for (int i = 0; i < r.count; ++i)
        if (r.item[i].severity == 0) detail::fail(code_str(r.item[i].code), r.item[i].field, r.item[i].value, code_rule(r.item[i].code));
#else
    (void)r;
#endif
}

// @ENCODERS@
