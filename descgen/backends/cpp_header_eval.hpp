// The evaluator of descgen_tcgen05.hpp (descgen/backends/cpp_header_eval.hpp, appended to the
// generated tables by descgen.backends.cpp_header). It holds no legal value of its own: every set,
// limit and row it compares with is one of the tables above. Field checks are generic (bit ranges,
// legal raw runs); each catalog rule is a short function or line over the tables, mirroring its
// @_impl in descgen/checks.py, in the catalog's order (cpp_header.EVALUATOR_RULES);
// tests/test_cpp_header.py checks both against the Python API over a million words and contexts.

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

DESCGEN_HD inline bool in_mask(long long value, long long unit, std::uint64_t mask) {  // (no branch)
    const unsigned long long v = static_cast<unsigned long long>(value), u = static_cast<unsigned long long>(unit);
    return (value >= 0) & (v % u == 0) & (v / u < 64) & ((mask >> ((v / u) & 63)) & 1u);
}
DESCGEN_HD inline bool name_in(long long id, std::uint64_t mask) { return (id >= 0) & (id < 64) & ((mask >> (id & 63)) & 1u); }
DESCGEN_HD inline bool supports(std::uint32_t feature, Arch arch) { return (feature >> static_cast<int>(arch)) & 1u; }

/** Table 52: the swizzle modes (name-id mask) for an element size and major-ness. */
DESCGEN_HD inline std::uint64_t swizzles_for(int bits, long long major) {
    for (int i = 0; i < MAJOR_COUNT; ++i)
        if (MAJOR_NAMES[i] == major) return bits >= 0 && bits < 64 ? SWIZZLES_BY_BITS[i * 64 + bits] : 0;
    return 0;
}
DESCGEN_HD inline int type_bits(long long id) {  // (no branch)
    const bool named = (id >= 0) & (id < NAME_COUNT);
    return named * TYPE_BITS[named ? id : 0];
}

// -- instruction descriptor ----------------------------------------------------------------------

/** What the idesc rules read: the values, the kind, the MMA's K (-1: none, K = 96 with sparsity), and
 *  Table 39 looked up once for the word (walk_shapes): which rows the context has, and the M, N and Table 50 answers
 *  of the rows M and N are checked against (_shape_scope in descgen/checks.py). */
struct IdescFacts {
    const Values* d;
    int kind;
    long long k;
    const Context& ctx;
    bool ctx_rows;      // Table 39 has rows for the kind under the context (any sparsity, K)
    bool own_case;      // ... and for the word's sparsity and K
    bool scope;         // the rows M and N are checked against exist (the context's, else any context's)
    bool m_ok;          // M is in one of them
    bool n_rows;        // some of them have M
    bool n_ok;          // one with M has N
    bool t50_rows;      // some of them have M and N
    bool t50_ok;        // one with M and N has N in Table 50 for its cta_group
    bool ws_rows;       // Table 39 has .ws rows for the kind
    std::uint64_t sv_rows;    // [[scale_vec]]'s rows of the kind and the context's size (any, when not given): a mask of the rows' indices
    std::uint64_t sv_k_rows;  // ... of the kind (any size) whose K is the MMA's
};

/** Index value / unit of a ROWS_* table, as that table's rows (none: not a multiple of unit below 64 * unit). */
DESCGEN_HD inline std::uint64_t rows_of(const std::uint64_t* table, long long value, long long unit) {
    const unsigned long long v = static_cast<unsigned long long>(value), u = static_cast<unsigned long long>(unit);
    const bool in = (value >= 0) & (v % u == 0) & (v / u < 64);  // (unsigned: a power-of-two unit is a shift)
    return table[in ? v / u : 0] & (0ull - in);  // (no branch)
}

/** Table 39's rows for the word and context, as masks of SHAPES' indices (ROWS_*, a few ANDs, no walk
 *  over the rows): the facts the shape rules read. The rows M and N are checked against are the
 *  context's (cta_group, .ws) with the word's sparsity and K, else (none, and the MMA has a K) any
 *  context's. Also the [[scale_vec]] row sets the scale rules read (SV_ROWS_*). */
DESCGEN_HD DESCGEN_INLINE void walk_shapes(IdescFacts& f) {
    const long long sparse = f.d->get(idesc_slot::sparse), n = f.d->get(idesc_slot::n), k = f.k;
    const int cg = f.ctx.cta_group, ws = f.ctx.ws;
    const std::uint64_t kind = ROWS_KIND[f.kind];
    const unsigned cgi = static_cast<unsigned>(cg + 1), wsi = static_cast<unsigned>(ws + 1);
    const std::uint64_t ctx = kind & (cgi < 5 && wsi < 3 ? ROWS_CONTEXT[cgi * 3 + wsi] : 0);
    const std::uint64_t own = kind & (sparse == 0 || sparse == 1 ? ROWS_SPARSE[sparse] : 0) & rows_of(ROWS_K, k, K_UNIT);
    const std::uint64_t with_m = own & rows_of(ROWS_M, f.d->get(idesc_slot::m), M_UNIT);
    const std::uint64_t with_n = with_m & rows_of(ROWS_N, n, N_UNIT);
    const std::uint64_t t50 = with_n & rows_of(ROWS_T50, n, N_UNIT);
    const std::uint64_t scope = (ctx & own) || k < 0 ? ctx : ~0ull;
    f.ctx_rows = ctx != 0;
    f.own_case = (ctx & own) != 0;
    f.ws_rows = (kind & ROWS_CONTEXT[0 * 3 + 2]) != 0;  // (any cta_group, .ws)
    const int sv = static_cast<int>(f.ctx.scale_vec);  // [[scale_vec]] (SV_ROWS_*)
    const unsigned svi = static_cast<unsigned>(sv + 1);
    f.sv_rows = SV_ROWS_KIND[f.kind] & (svi <= SCALE_VEC_COUNT ? SV_ROWS_NAME[svi] : 0);
    f.sv_k_rows = SV_ROWS_KIND[f.kind] & rows_of(SV_ROWS_K, k, K_UNIT);
    f.scope = k >= 0 && own != 0;
    f.m_ok = f.n_rows = (scope & with_m) != 0;
    f.n_ok = f.t50_rows = (scope & with_n) != 0;
    f.t50_ok = (scope & t50) != 0;
}

/** A name id's entry of a table indexed by name id (id: a name id, or -1 for none: entry 0, which the
 *  caller's own id >= 0 test discards), read without a branch. */
template <class T>
DESCGEN_HD inline T at_name(const T* table, long long id) { return table[id >= 0 ? id : 0]; }

/** The idesc rules, in the catalog's order, each when its context is given (DESCGEN_RULE_IF_: the
 *  rule's code, the field it reports, when it fires, the value; the severity is the catalog's). Each
 *  is a few table lookups (ROWS_*, TYPES_BAD, MN_MAJOR_NOT, SV_ROWS_*) of facts read once (walk_shapes). */
DESCGEN_HD DESCGEN_INLINE void idesc_rules(const Values& d, std::uint32_t word, int kind, const Context& ctx, Report& r) {
    IdescFacts f{&d, kind, 0, ctx, false, false, false, false, false, false, false, false, false, 0, 0};
    const long long sparse = d.get(idesc_slot::sparse), kdim = d.get(idesc_slot::k_dim);
    const bool k96 = (kdim >= 0) & (at_name(NAME_INT, kdim) == 96);
    f.k = k96 && sparse ? -1 : k96 ? 96 : KS[kind * 2 + (sparse ? 1 : 0)];
    walk_shapes(f);
    const std::uint32_t given = ctx.given() & RULE_NEEDS_OF[word_idesc];  // (the others are never read)
    const int arch = static_cast<int>(ctx.arch) & 31;  // (read only when given)
    const long long m = d.get(idesc_slot::m), n = d.get(idesc_slot::n), st = d.get(idesc_slot::scale_type);
#define DESCGEN_RULE_IF_(CODE, FIELD, FIRE, VALUE) \
    if (((RULE_NEEDS[static_cast<int>(Code::CODE)] & ~given) == 0) && (FIRE)) \
        add_finding(r, Code::CODE, CODE_SEVERITY[static_cast<int>(Code::CODE)], FIELD, VALUE, 0)
    {  // IDESC-TYPES-TABLE39: TYPES_BAD, indexed by the type fields' raw bits
        const std::uint32_t key = types_key(word);
        const bool bad = (TYPES_BAD[kind * TYPES_KEY_WORDS + (key >> 6)] >> (key & 63)) & 1u, mx = d.has(idesc_slot::scale_type);
        long long dtype = d.get(idesc_slot::dtype);
        if (dtype < 0) dtype = IMPLIED_DTYPE[kind];
        DESCGEN_RULE_IF_(IDESC_TYPES_TABLE39, "dtype", bad & !mx, dtype);
        DESCGEN_RULE_IF_(IDESC_TYPES_TABLE39, "scale_type", bad & mx, st);
    }
    {  // IDESC-K-VALUE (K = 96 with sparsity: f.k is -1)
        const bool k96_sparse = k96 & (sparse != 0), kdim_field = d.has(idesc_slot::k_dim);
        const bool other = (f.k >= 0) & f.ctx_rows & !f.own_case;
        DESCGEN_RULE_IF_(IDESC_K_VALUE, "k_dim", k96_sparse | (other & kdim_field), k96_sparse ? 96 : f.k);
        DESCGEN_RULE_IF_(IDESC_K_VALUE, "sparse", other & !kdim_field, sparse);
    }
    DESCGEN_RULE_IF_(IDESC_M_SHAPE, "m", f.scope & !f.m_ok & in_mask(m, M_UNIT, M_UNION[kind]), m);
    DESCGEN_RULE_IF_(IDESC_N_SHAPE, "n", f.scope & f.n_rows & !f.n_ok & in_mask(n, N_UNIT, N_UNION[kind]), n);
    const long long a_major = d.get(idesc_slot::a_major), b_major = d.get(idesc_slot::b_major);
    const long long atype = d.get(idesc_slot::atype), btype = d.get(idesc_slot::btype);
    DESCGEN_RULE_IF_(IDESC_N_TRANSPOSE_8BIT, "n",
                     (b_major == name::mn) & (type_bits(btype) == 8) & f.scope & f.t50_rows & !f.t50_ok, n);  // (8: Table 50's title)
    DESCGEN_RULE_IF_(IDESC_MAJOR_TYPE_SIZE, "a_major", (a_major == name::mn) & name_in(atype, MN_MAJOR_NOT), a_major);
    DESCGEN_RULE_IF_(IDESC_MAJOR_TYPE_SIZE, "b_major", (b_major == name::mn) & name_in(btype, MN_MAJOR_NOT), b_major);
    DESCGEN_RULE_IF_(IDESC_A_MAJOR_TMEM, "a_major", (ctx.a_tmem == 1) & (a_major != A_TMEM_MAJOR) & (a_major >= 0), a_major);
    const long long sel = d.get(idesc_slot::sparsity_selector);
    DESCGEN_RULE_IF_(IDESC_SPARSITY_SELECTOR_DENSE, "sparsity_selector", (sel > 0) & (sparse == 0), sel);
    const long long shift_id = d.get(idesc_slot::max_shift), shift = at_name(NAME_INT, shift_id);
    DESCGEN_RULE_IF_(IDESC_MAX_SHIFT_WS, "max_shift", (shift_id >= 0) & (shift != 0) & (ctx.ws == 0), shift);
    DESCGEN_RULE_IF_(IDESC_SPARSE_SP, "sparse", ctx.sp != sparse, sparse);
    DESCGEN_RULE_IF_(MMA_WS_CTA_GROUP, "cta_group", (ctx.ws == 1) & !((WS_CTA_GROUPS >> (ctx.cta_group & 31)) & 1u), ctx.cta_group);
    DESCGEN_RULE_IF_(MMA_WS_KIND, "ws", (ctx.ws == 1) & !f.ws_rows, 1);
    const int sv = static_cast<int>(ctx.scale_vec);
    DESCGEN_RULE_IF_(IDESC_SCALE_VEC_KIND, "scale_vec", !f.sv_rows, sv);
    DESCGEN_RULE_IF_(IDESC_SCALE_VEC_K, "scale_vec", (f.sv_rows != 0) & !(f.sv_rows & f.sv_k_rows), sv);  // (_scale_case: none, though the size has rows)
    {  // IDESC-SCALE-VEC-TYPE: the scale type against the first of the rows (_scale_case)
        const std::uint64_t rows = f.sv_rows & f.sv_k_rows;
        DESCGEN_RULE_IF_(IDESC_SCALE_VEC_TYPE, "scale_type", (st >= 0) & (rows != 0) & !(rows & (~rows + 1) & at_name(SV_ROWS_SCALE_TYPE, st)), st);
    }
    {  // IDESC-A/B-SF-ID-SCALE-VEC: the context's size's rows with the MMA's K, else any size's; one of them allows the ID
        const std::uint64_t own = f.sv_k_rows & f.sv_rows, rows = own ? own : f.sv_k_rows;
        const bool scaled = (f.k >= 0) & ((SCALED_KINDS >> kind) & 1u);
        const long long a_sf = d.get(idesc_slot::a_sf_id), b_sf = d.get(idesc_slot::b_sf_id);
        DESCGEN_RULE_IF_(IDESC_A_SF_ID_SCALE_VEC, "a_sf_id", scaled & (a_sf >= 0) & !((a_sf < 32) & ((rows & SV_ROWS_SF[a_sf & 31]) != 0)), a_sf);
        DESCGEN_RULE_IF_(IDESC_B_SF_ID_SCALE_VEC, "b_sf_id", scaled & (b_sf >= 0) & !((b_sf < 32) & ((rows & SV_ROWS_SF[b_sf & 31]) != 0)), b_sf);
    }
#define DESCGEN_ARCH_RULE_(CODE, APPLIES, FEATURE) DESCGEN_RULE_IF_(CODE, "arch", (APPLIES) && !((FEATURE >> arch) & 1u), arch)
    DESCGEN_ARCH_RULE_(IDESC_KIND_ARCH, kind == static_cast<int>(Kind::i8), require::kind_i8);
    DESCGEN_ARCH_RULE_(IDESC_SPARSE_ARCH, ((kind == static_cast<int>(Kind::mxf4)) | (kind == static_cast<int>(Kind::mxf4nvf4)))
                                                      & (ctx.sp >= 0 ? ctx.sp == 1 : sparse == 1), require::sparse_mxf4);
    DESCGEN_ARCH_RULE_(IDESC_K96_ARCH, k96, require::k96);
    DESCGEN_ARCH_RULE_(IDESC_SCALE_VEC_ARCH,
                      (ctx.scale_vec == ScaleVec::_1X) | (ctx.scale_vec == ScaleVec::_2X) | (ctx.scale_vec == ScaleVec::_4X), require::scale_vec_nx);
    DESCGEN_ARCH_RULE_(IDESC_SCALE_VEC_ARCH, (ctx.scale_vec == ScaleVec::block16) | (ctx.scale_vec == ScaleVec::block32),
                      require::scale_vec_block);
#undef DESCGEN_ARCH_RULE_
#undef DESCGEN_RULE_IF_
}

/** context(): ws not given is false under a cta_group tcgen05.mma.ws does not exist with. */
DESCGEN_HD inline Context normalized(Context ctx) {
    if (ctx.ws < 0 && ctx.cta_group > 0 && !((WS_CTA_GROUPS >> ctx.cta_group) & 1u)) ctx.ws = 0;
    return ctx;
}

#define DESCGEN_RULE_(CODE, CALL) if ((RULE_NEEDS[static_cast<int>(Code::CODE)] & ~given) == 0) CALL

// -- shared memory descriptor ------------------------------------------------------------------------

DESCGEN_HD inline void smem_rules(const Values& d, Context ctx, Report& r, int role) {
    const std::uint32_t given = ctx.given();
    long long swizzle = d.get(smem_slot::swizzle), base = d.get(smem_slot::base_offset);
    bool absolute = d.get(smem_slot::lbo_mode) == name::absolute;
    int boundary = swizzle >= 0 ? PATTERN_BOUNDARY[swizzle] : 0;
    DESCGEN_RULE_(SMEM_LBO_MODE_SWIZZLE, if (absolute && swizzle >= 0 && !name_in(swizzle, ABS_LBO_SWIZZLES))
                                             r.add(Code::SMEM_LBO_MODE_SWIZZLE, 0, "swizzle", swizzle, role));
    DESCGEN_RULE_(SMEM_LBO_MODE_BASE_OFFSET, if (absolute && base != ABS_LBO_BASE_OFFSET)
                                                 r.add(Code::SMEM_LBO_MODE_BASE_OFFSET, 0, "base_offset", base, role));
    DESCGEN_RULE_(SMEM_LBO_MODE_ARCH, if (absolute && !supports(require::lbo_absolute, ctx.arch))
                                          r.add(Code::SMEM_LBO_MODE_ARCH, 0, "arch", static_cast<int>(ctx.arch), role));
    DESCGEN_RULE_(SMEM_BASE_OFFSET_IGNORED, if (swizzle == name::none && base)
                                                r.add(Code::SMEM_BASE_OFFSET_IGNORED, 2, "base_offset", base, role));
    DESCGEN_RULE_(SMEM_BASE_OFFSET_BOUNDARY, if (boundary && !base && ctx.pattern_start < 0 &&
                                                 ((d.get(smem_slot::start_address) % boundary) >> 7))
                                                 r.add(Code::SMEM_BASE_OFFSET_BOUNDARY, 1, "base_offset", 0, role));
    if ((RULE_NEEDS[static_cast<int>(Code::SMEM_BASE_OFFSET_TABLE41)] & ~given) == 0 && boundary) {
        long long ps = ctx.pattern_start;
        long long want = ps % boundary == 0 ? 0 : (ps >> 7) & 7;
        if (base != want) r.add(Code::SMEM_BASE_OFFSET_TABLE41, 0, "base_offset", base, role);
    }
}

// -- zero-column mask descriptor ---------------------------------------------------------------------

DESCGEN_HD inline void zcm_rules(const Values& d, Context ctx, Report& r, int role) {
    const std::uint32_t given = ctx.given();
    long long m = ctx.m;
    DESCGEN_RULE_(ZCM_WS, if (ctx.ws == 0) r.add(Code::ZCM_WS, 0, "ws", 0, role));
    if ((RULE_NEEDS[static_cast<int>(Code::ZCM_M)] & ~given) == 0) {
        bool ok = false;
        for (int i = 0; i < ZCM_M_COUNT; ++i) ok = ok || ZCM_MS[i] == m;
        if (!ok) r.add(Code::ZCM_M, 0, "m", m, role);
    }
    if ((RULE_NEEDS[static_cast<int>(Code::ZCM_COLUMN_SHIFT_M)] & ~given) == 0) {
        long long shift = d.get(zcm_slot::column_shift);
        for (int i = 0; i < ZCM_SHIFT_LIMIT_COUNT; ++i)
            if (ZCM_SHIFT_LIMIT[2 * i] == m && shift > ZCM_SHIFT_LIMIT[2 * i + 1]) r.add(Code::ZCM_COLUMN_SHIFT_M, 0, "column_shift", shift, role);
    }
    if ((RULE_NEEDS[static_cast<int>(Code::ZCM_SUBMASK_UNUSED)] & ~given) == 0) {
        for (int i = 0; i < ZCM_SUBMASKS_COUNT; ++i) {
            if (ZCM_SUBMASKS[2 * i] != m) continue;
            const int counts[4] = {zcm_slot::start_count_0, zcm_slot::start_count_1, zcm_slot::start_count_2, zcm_slot::start_count_3};
            const int spans[4] = {zcm_slot::first_span_0, zcm_slot::first_span_1, zcm_slot::first_span_2, zcm_slot::first_span_3};
            for (int s = ZCM_SUBMASKS[2 * i + 1]; s < 4; ++s) {
                if (d.get(counts[s])) r.add(Code::ZCM_SUBMASK_UNUSED, 1, ZCM_SLOT_STR[counts[s]], d.get(counts[s]), role);
                if (d.get(spans[s])) r.add(Code::ZCM_SUBMASK_UNUSED, 1, ZCM_SLOT_STR[spans[s]], d.get(spans[s]), role);
            }
        }
    }
}

// -- tensor memory address ---------------------------------------------------------------------------

DESCGEN_HD inline bool alloc_size(long long n) {
    for (int i = 0; i < ALLOC_SIZE_COUNT; ++i)
        if (ALLOC_SIZES[i] == n) return true;
    return false;
}

DESCGEN_HD inline void taddr_rules(const Values& d, Context ctx, Report& r) {
    const std::uint32_t given = ctx.given();
    long long lane = d.get(taddr_slot::lane), column = d.get(taddr_slot::column);
    long long per = TMEM_LANES / WARPS;
    DESCGEN_RULE_(TADDR_WARP_LANES, if (lane < TMEM_LANES && !(lane >= per * ctx.warp && lane < per * (ctx.warp + 1)))
                                        r.add(Code::TADDR_WARP_LANES, 0, "lane", lane));
    long long n = ctx.alloc_columns, base = ctx.alloc_base;
    DESCGEN_RULE_(TADDR_ALLOC_COLUMNS, if (!alloc_size(n)) r.add(Code::TADDR_ALLOC_COLUMNS, 0, "alloc_columns", n));
    if ((RULE_NEEDS[static_cast<int>(Code::TADDR_COLUMN_ALLOC)] & ~given) == 0 && alloc_size(n)) {
        if (base + n > TMEM_COLUMNS) r.add(Code::TADDR_COLUMN_ALLOC, 0, "alloc_base", base);
        else if (column >= 0 && column < TMEM_COLUMNS && !(column >= base && column < base + n))
            r.add(Code::TADDR_COLUMN_ALLOC, 0, "column", column);
    }
}

// -- one instruction -----------------------------------------------------------------------------------

DESCGEN_HD inline void mma_rules(const Values& idesc, int kind, const Values* desc[2], Report& r) {
    const int types[2] = {idesc_slot::atype, idesc_slot::btype};
    const int majors[2] = {idesc_slot::a_major, idesc_slot::b_major};
    for (int op = 0; op < 2; ++op) {  // MMA-SWIZZLE-TABLE52
        if (!desc[op]) continue;
        long long t = idesc.get(types[op]), major = idesc.get(majors[op]), swizzle = desc[op]->get(smem_slot::swizzle);
        if (!type_bits(t) || major < 0 || swizzle < 0) continue;
        std::uint64_t allowed = swizzles_for(type_bits(t), major);
        if (allowed && !name_in(swizzle, allowed)) r.add(Code::MMA_SWIZZLE_TABLE52, 0, "swizzle", swizzle, op + 1);
    }
    for (int op = 0; op < 2; ++op) {  // MMA-LBO-MODE-MAJOR
        if (!desc[op]) continue;
        long long major = idesc.get(majors[op]);
        if (desc[op]->get(smem_slot::lbo_mode) == name::absolute && major != ABS_LBO_MAJOR && major >= 0)
            r.add(Code::MMA_LBO_MODE_MAJOR, 0, "lbo_mode", name::absolute, op + 1);
    }
    for (int op = 0; op < 2; ++op) {  // MMA-LBO-IGNORED
        if (!desc[op]) continue;
        long long swizzle = desc[op]->get(smem_slot::swizzle), lbo = desc[op]->get(smem_slot::lbo);
        if (idesc.get(majors[op]) == name::k && swizzle != name::none && swizzle >= 0 &&
            desc[op]->get(smem_slot::lbo_mode) == name::relative && lbo != 0 && lbo != 16)  // (0 or 16: encodes 0 or 1)
            r.add(Code::MMA_LBO_IGNORED, 2, "lbo", lbo, op + 1);
    }
    const int extents[2] = {idesc_slot::m, idesc_slot::n};
    for (int op = 0; op < 2; ++op) {  // MMA-SBO-ATOM (E47): whole swizzle patterns, or every group inside one atom row
        if (!desc[op]) continue;
        long long major = idesc.get(majors[op]), swizzle = desc[op]->get(smem_slot::swizzle), sbo = desc[op]->get(smem_slot::sbo);
        if (major < 0 || swizzle < 0 || sbo < 0) continue;
        long long period = SWIZZLE_PERIOD[swizzle], row = SWIZZLE_ROW[swizzle];
        if (!period || sbo % period == 0) continue;
        // the groups one MMA reads along SBO, at least (half of M or N per CTA; the atom's K rows in the dense K)
        long long extent = idesc.get(extents[op]), atom_k = MN_ATOM_K_ROWS[swizzle];
        long long groups = major == name::k ? (extent >= 0 ? (extent / 2 + 7) / 8 : 0)
                                            : (atom_k ? (KIND_DENSE_K[kind] + atom_k - 1) / atom_k : 0);
        if (groups < 2) continue;
        // the bytes of an atom row each group reads, at least: K-major the operand's K (B's sparse K under .sp),
        // MN-major half of M or N; one 16-byte chunk where unknown, at most the row
        long long elements = major == name::k ? KS[kind * 2 + (op == 1 && idesc.get(idesc_slot::sparse) == 1 ? 1 : 0)]
                                              : (extent >= 0 ? extent / 2 : 0);
        long long per = PER_CHUNK_BY_BITS[kind * 64 + type_bits(idesc.get(types[op]))];
        long long window = per && elements ? (elements + per - 1) / per * 16 : 16;
        if (window > row) window = row;
        if (desc[op]->get(smem_slot::start_address) % row + (groups - 1) * sbo + window > row)
            r.add(Code::MMA_SBO_ATOM, 1, "sbo", sbo, op + 1);
    }
}
#undef DESCGEN_RULE_

}  // namespace detail

namespace detail {
/** validate_idesc for kind K: the kind's plan read, then its rules, with every per-kind table entry
 *  (its fields, ROWS_KIND, KS, TYPES_BAD...) a constant. */
template <int K>
DESCGEN_HD inline void validate_idesc_kind(std::uint32_t word, const Context& ctx, Report& r) {
    Values d;
    read_plan_from<IDESC_PLAN0 + K, IDESC_PLAN0 + K + 1>(IDESC_PLAN0 + K, word, d, &r, 0);
    idesc_rules(d, word, K, normalized(ctx), r);
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
    detail::idesc_rules(di, idesc, static_cast<int>(kind), detail::normalized(instr), r);
    const detail::Values* desc[2] = {nullptr, &db};
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
    detail::mma_rules(di, static_cast<int>(kind), desc, r);
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
