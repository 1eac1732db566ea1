/*
 * gen_oracle - kafel decision oracle for Ward's future `ward import --from kafel`.
 *
 * A reproducibility tool, NOT built by the Ward project. It links against the
 * real kafel (google/kafel, Apache-2.0): libkafel.a and kafel's own BPF test
 * interpreter test/runner/interpreter.c. See SOURCE.md and tools/regen.sh.
 *
 * Build (from this directory, KAFEL = a built kafel checkout):
 *   cc -O1 -std=gnu11 -I$KAFEL/include -I$KAFEL/test/runner gen_oracle.c \
 *      $KAFEL/test/runner/interpreter.c $KAFEL/libkafel.a -o gen_oracle
 * Run (cwd = this directory, so that every path in the output is relative):
 *   ./gen_oracle AMD64_TSV MANIFEST OUT.json
 * MANIFEST: one line per policy, "relative/path.policy<TAB>include_dir<TAB>
 * test_checks" where include_dir is "-" for none and test_checks is "-" or
 * kafel's own test verdicts for that policy, "nr,a0,..,a5,0xRET" joined by
 * ";" (from TEST_POLICY_{ALLOWS,BLOCKS}_SYSCALL, see tools/dump_tests). Those
 * vectors are added to the checks and their expected return value is
 * asserted: a mismatch aborts the run.
 *
 * For every policy: read the file, compile it with kafel for x86_64 only
 * (kafel_set_target_archs(KAFEL_TARGET_ARCH_X86_64)), with include_dir as the
 * only include search path when given. If it compiles, evaluate the BPF with
 * kafel's interpreter on struct seccomp_data {nr, AUDIT_ARCH_X86_64, ip 0,
 * args} and record the exact 32-bit return value.
 *
 * Which checks: a light lexer over the policy (and the files it #includes,
 * resolved in include_dir) collects
 *   - syscall nrs: identifiers in syscall position that are amd64 table names
 *     (AMD64_TSV) or #define'd constants (value truncated to u32, as kafel
 *     does), and SYSCALL[n] (u32);
 *   - every number literal (kafel syntax: 0x, 0b, octal, decimal, -decimal).
 * nrs checked = named nrs + {0, 1, 60, 231} + one nr not named (picked from the
 * amd64 table with the seeded PRNG). Value pool = {0, 1, 2, 0xffffffff,
 * 0xffffffffffffffff, 0x100000000} + for each literal c: c, c-1, c+1,
 * c|0x100000000 + 2 random u64. Per nr 12 argument vectors built only from
 * pool values, chosen by evaluating a few hundred candidates with kafel's
 * filter so that the set covers every distinct return value found and
 * boundary pairs (see select_vectors). Mixes draw a constant-derived value 2/3
 * of the time, any pool value 1/3.
 * The PRNG is splitmix64 seeded with SEED ^ fnv1a(policy path) ^ nr, so the
 * output is deterministic and one policy's checks do not depend on others.
 * Checks are de-duplicated and sorted by (nr, args); cases by manifest order.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kafel.h>

#include "interpreter.h"

#define SEED 0x5741524b4146454cULL /* "WARKAFEL" */
#define VECTORS_PER_NR 12

/* ---------- small growable arrays ---------- */
typedef struct {
  uint64_t* v;
  size_t n, cap;
} u64vec;

static void u64_push(u64vec* a, uint64_t x) {
  if (a->n == a->cap) {
    a->cap = a->cap ? a->cap * 2 : 16;
    a->v = realloc(a->v, a->cap * sizeof(*a->v));
    if (!a->v) abort();
  }
  a->v[a->n++] = x;
}

static bool u64_has(const u64vec* a, uint64_t x) {
  for (size_t i = 0; i < a->n; ++i)
    if (a->v[i] == x) return true;
  return false;
}

static void u64_push_uniq(u64vec* a, uint64_t x) {
  if (!u64_has(a, x)) u64_push(a, x);
}

static int cmp_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

/* ---------- PRNG ---------- */
static uint64_t splitmix64(uint64_t* s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static uint64_t fnv1a(const char* s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (; *s; ++s) h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
  return h;
}

/* ---------- amd64 table ---------- */
typedef struct {
  char* name;
  uint32_t nr;
  int nargs;
} table_entry;
static table_entry* table;
static size_t table_len;

static void load_table(const char* path) {
  FILE* f = fopen(path, "r");
  if (!f) {
    perror(path);
    exit(2);
  }
  char line[4096];
  size_t cap = 0;
  while (fgets(line, sizeof line, f)) {
    char* tab = strchr(line, '\t');
    if (!tab) continue;
    *tab = '\0';
    if (table_len == cap) {
      cap = cap ? cap * 2 : 512;
      table = realloc(table, cap * sizeof(*table));
    }
    table[table_len].name = strdup(line);
    table[table_len].nr = (uint32_t)strtoul(tab + 1, NULL, 10);
    table[table_len].nargs = 0;
    for (char* q = tab + 1; (q = strchr(q, '\t')) != NULL; ++q)
      table[table_len].nargs++;
    table_len++;
  }
  fclose(f);
}

static int table_nargs(uint32_t nr) {
  for (size_t i = 0; i < table_len; ++i)
    if (table[i].nr == nr) return table[i].nargs > 0 ? table[i].nargs : 1;
  return 6;
}

static bool table_lookup(const char* name, uint32_t* nr) {
  for (size_t i = 0; i < table_len; ++i)
    if (strcmp(table[i].name, name) == 0) {
      *nr = table[i].nr;
      return true;
    }
  return false;
}

/* ---------- files ---------- */
static char* read_file(const char* path, size_t* len) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char* buf = malloc(cap);
  size_t r;
  while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += r;
    if (cap - n - 1 == 0) {
      cap *= 2;
      buf = realloc(buf, cap);
    }
  }
  fclose(f);
  buf[n] = '\0';
  if (len) *len = n;
  return buf;
}

/* ---------- light lexer for choosing checks ---------- */
typedef struct {
  char name[128];
  uint64_t value;
} constdef;

typedef struct {
  u64vec nrs;      /* named syscall nrs (u32 values) */
  u64vec numbers;  /* every number literal */
  constdef defs[4096];
  size_t ndefs;
  char* visited[64];
  size_t nvisited;
} scan_state;

static bool parse_kafel_number(const char* s, size_t n, uint64_t* out) {
  char buf[128];
  if (n >= sizeof buf) return false;
  memcpy(buf, s, n);
  buf[n] = '\0';
  bool neg = false;
  const char* p = buf;
  if (*p == '-') {
    neg = true;
    ++p;
  }
  errno = 0;
  uint64_t v;
  if (p[0] == '0' && p[1] == 'x')
    v = strtoull(p + 2, NULL, 16);
  else if (p[0] == '0' && p[1] == 'b')
    v = strtoull(p + 2, NULL, 2);
  else if (p[0] == '0' && p[1])
    v = strtoull(p + 1, NULL, 8); /* kafel: strtoull base 8, stops at 8/9 */
  else
    v = strtoull(p, NULL, 10);
  if (errno == ERANGE) return false;
  *out = neg ? 0 - v : v; /* kafel wraps -N modulo 2^64 */
  return true;
}

static bool lookup_def(const scan_state* st, const char* name, uint64_t* v) {
  for (size_t i = 0; i < st->ndefs; ++i)
    if (strcmp(st->defs[i].name, name) == 0) {
      *v = st->defs[i].value;
      return true;
    }
  return false;
}

static bool is_action(const char* id) {
  static const char* const actions[] = {
      "ALLOW", "LOG",  "DENY",  "KILL",       "KILL_THREAD", "KILL_PROCESS",
      "TRAP",  "TRACE", "ERRNO", "USER_NOTIF", NULL};
  for (int i = 0; actions[i]; ++i)
    if (strcmp(actions[i], id) == 0) return true;
  return false;
}

enum { BR_OTHER, BR_ACTION };

static void scan_text(scan_state* st, const char* text, const char* incdir,
                      int depth);

static void scan_include(scan_state* st, const char* name, const char* incdir,
                         int depth) {
  if (!incdir || depth >= 16) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", incdir, name);
  for (size_t i = 0; i < st->nvisited; ++i)
    if (strcmp(st->visited[i], path) == 0) return;
  if (st->nvisited < 64) st->visited[st->nvisited++] = strdup(path);
  char* text = read_file(path, NULL);
  if (!text) return;
  scan_text(st, text, incdir, depth + 1);
  free(text);
}

static void scan_text(scan_state* st, const char* text, const char* incdir,
                      int depth) {
  const char* p = text;
  int brace_kind[1024];
  int nbrace = 0;
  int paren = 0;
  bool pending_action = false;
  char prev = 0;          /* previous punctuation token, or 'i' ident, 'n' number */
  char previd[128] = "";  /* previous identifier */
  while (*p) {
    if (isspace((unsigned char)*p)) {
      ++p;
      continue;
    }
    if (p[0] == '/' && p[1] == '/') {
      while (*p && *p != '\n') ++p;
      continue;
    }
    if (p[0] == '/' && p[1] == '*') {
      const char* e = strstr(p + 2, "*/");
      p = e ? e + 2 : p + strlen(p);
      continue;
    }
    if (strncmp(p, "#include", 8) == 0) {
      p += 8;
      while (*p && *p != '\n' && *p != ';') {
        if (*p == '"') {
          const char* e = strchr(p + 1, '"');
          if (!e) break;
          char name[1024];
          size_t n = (size_t)(e - p - 1);
          if (n < sizeof name) {
            memcpy(name, p + 1, n);
            name[n] = '\0';
            scan_include(st, name, incdir, depth);
          }
          p = e + 1;
        } else {
          ++p;
        }
      }
      continue;
    }
    if (*p == '#') {
      /* # define NAME NUMBER */
      const char* q = p + 1;
      while (*q == ' ' || *q == '\t') ++q;
      if (strncmp(q, "define", 6) == 0) {
        q += 6;
        while (isspace((unsigned char)*q)) ++q;
        const char* ns = q;
        while (isalnum((unsigned char)*q) || *q == '_') ++q;
        size_t nl = (size_t)(q - ns);
        while (isspace((unsigned char)*q)) ++q;
        const char* vs = q;
        if (*q == '-') ++q;
        while (isalnum((unsigned char)*q)) ++q;
        uint64_t v;
        if (nl > 0 && nl < 128 && parse_kafel_number(vs, (size_t)(q - vs), &v) &&
            st->ndefs < sizeof st->defs / sizeof st->defs[0]) {
          memcpy(st->defs[st->ndefs].name, ns, nl);
          st->defs[st->ndefs].name[nl] = '\0';
          st->defs[st->ndefs].value = v;
          st->ndefs++;
          u64_push_uniq(&st->numbers, v);
        }
        p = q;
        prev = 'n';
        continue;
      }
      ++p;
      continue;
    }
    if (isdigit((unsigned char)*p) ||
        (*p == '-' && isdigit((unsigned char)p[1]))) {
      const char* s = p;
      if (*p == '-') ++p;
      while (isalnum((unsigned char)*p)) ++p;
      uint64_t v;
      if (parse_kafel_number(s, (size_t)(p - s), &v)) {
        u64_push_uniq(&st->numbers, v);
        if (strcmp(previd, "SYSCALL") == 0 && prev == '[')
          u64_push_uniq(&st->nrs, (uint32_t)v);
      }
      prev = 'n';
      continue;
    }
    if (isalpha((unsigned char)*p) || *p == '_') {
      const char* s = p;
      while (isalnum((unsigned char)*p) || *p == '_') ++p;
      char id[128];
      size_t n = (size_t)(p - s);
      if (n >= sizeof id) n = sizeof id - 1;
      memcpy(id, s, n);
      id[n] = '\0';
      if (is_action(id)) pending_action = true;
      bool syscall_pos = nbrace > 0 && brace_kind[nbrace - 1] == BR_ACTION &&
                         paren == 0 && (prev == '{' || prev == ',');
      if (syscall_pos) {
        uint64_t v;
        uint32_t nr;
        if (lookup_def(st, id, &v))
          u64_push_uniq(&st->nrs, (uint32_t)v);
        else if (table_lookup(id, &nr))
          u64_push_uniq(&st->nrs, nr);
      }
      strcpy(previd, id);
      prev = 'i';
      continue;
    }
    switch (*p) {
      case '{':
        if (nbrace < 1024)
          brace_kind[nbrace++] = pending_action ? BR_ACTION : BR_OTHER;
        pending_action = false;
        paren = 0;
        break;
      case '}':
        if (nbrace > 0) nbrace--;
        break;
      case '(':
        if (nbrace > 0 && brace_kind[nbrace - 1] == BR_ACTION) paren++;
        break;
      case ')':
        if (paren > 0) paren--;
        break;
      default:
        break;
    }
    prev = *p;
    ++p;
  }
}

/* ---------- JSON ---------- */
static void json_string(FILE* out, const char* s) {
  fputc('"', out);
  for (const unsigned char* p = (const unsigned char*)s; *p; ++p) {
    switch (*p) {
      case '"': fputs("\\\"", out); break;
      case '\\': fputs("\\\\", out); break;
      case '\n': fputs("\\n", out); break;
      case '\t': fputs("\\t", out); break;
      case '\r': fputs("\\r", out); break;
      default:
        if (*p < 0x20 || *p >= 0x7f)
          fprintf(out, "\\u%04x", *p);
        else
          fputc(*p, out);
    }
  }
  fputc('"', out);
}

typedef struct {
  uint32_t nr;
  uint64_t args[6];
  uint32_t ret;
} check;

static int cmp_check(const void* a, const void* b) {
  const check* x = a;
  const check* y = b;
  if (x->nr != y->nr) return x->nr < y->nr ? -1 : 1;
  for (int i = 0; i < 6; ++i)
    if (x->args[i] != y->args[i]) return x->args[i] < y->args[i] ? -1 : 1;
  return 0;
}

/* 2/3 constant-derived value (if any), 1/3 any pool value */
static uint64_t pick(uint64_t* s, const u64vec* derived, const u64vec* pool) {
  uint64_t r = splitmix64(s);
  const u64vec* from = (derived->n && r % 3 != 0) ? derived : pool;
  return from->v[splitmix64(s) % from->n];
}

static uint32_t run_bpf(const struct sock_fprog* prog, uint32_t nr,
                        const uint64_t args[6], const char* policy) {
  struct seccomp_data d;
  memset(&d, 0, sizeof d);
  d.nr = (int)nr;
  d.arch = AUDIT_ARCH_X86_64;
  d.instruction_pointer = 0;
  for (int i = 0; i < 6; ++i) d.args[i] = args[i];
  interpreter_ctxt_t ictx;
  memset(&ictx, 0, sizeof ictx);
  if (!interpreter_run(&ictx, prog, &d)) {
    fprintf(stderr, "%s: interpreter error: %s\n", policy, ictx.error_buf);
    exit(3);
  }
  return ictx.result;
}

static bool same_args(const uint64_t a[6], const uint64_t b[6]) {
  return memcmp(a, b, 6 * sizeof(uint64_t)) == 0;
}

static bool chosen_has(const check* out, size_t n, const uint64_t args[6]) {
  for (size_t i = 0; i < n; ++i)
    if (same_args(out[i].args, args)) return true;
  return false;
}

/*
 * Choose VECTORS_PER_NR argument vectors for one nr, all built from the value
 * pool, and store them (with kafel's verdict) in out. Candidates, in order:
 * all zero; zero except arg j = p (j < nargs, every pool value p); all six
 * args = p (every p); 64 mixes (pick()). All are evaluated. Chosen, in order:
 *   1. the all-zero vector;
 *   2. the first candidate for each distinct return value;
 *   3. boundary pairs: for each chosen vector (in order), the first vector
 *      that differs from it in one arg (j < nargs, value from the pool) and
 *      gets a different return value;
 *   4. remaining slots: candidates in a seeded random order.
 */
static size_t select_vectors(const struct sock_fprog* prog, const char* path,
                             uint32_t nr, const u64vec* pool,
                             const u64vec* derived, check* out) {
  uint64_t s = SEED ^ fnv1a(path) ^ ((uint64_t)nr * 0x9e3779b97f4a7c15ULL);
  int nargs = table_nargs(nr);
  size_t ncand = 1 + (size_t)nargs * pool->n + pool->n + 64, nc = 0;
  check* cand = calloc(ncand, sizeof *cand);
  nc++; /* all zero */
  for (int j = 0; j < nargs; ++j)
    for (size_t p = 0; p < pool->n; ++p) cand[nc++].args[j] = pool->v[p];
  for (size_t p = 0; p < pool->n; ++p, ++nc)
    for (int a = 0; a < 6; ++a) cand[nc].args[a] = pool->v[p];
  for (int k = 0; k < 64; ++k, ++nc)
    for (int a = 0; a < 6; ++a) cand[nc].args[a] = pick(&s, derived, pool);
  for (size_t c = 0; c < nc; ++c) {
    cand[c].nr = nr;
    cand[c].ret = run_bpf(prog, nr, cand[c].args, path);
  }

  size_t n = 0;
  out[n++] = cand[0];
  for (size_t c = 1; c < nc && n < VECTORS_PER_NR; ++c) {
    bool seen = false;
    for (size_t k = 0; k < n; ++k)
      if (out[k].ret == cand[c].ret) seen = true;
    if (!seen && !chosen_has(out, n, cand[c].args)) out[n++] = cand[c];
  }
  for (size_t k = 0; k < n && n < VECTORS_PER_NR; ++k) {
    bool found = false;
    for (int j = 0; j < nargs && !found; ++j)
      for (size_t p = 0; p < pool->n && !found; ++p) {
        check w = out[k];
        w.args[j] = pool->v[p];
        if (chosen_has(out, n, w.args)) continue;
        w.ret = run_bpf(prog, nr, w.args, path);
        if (w.ret != out[k].ret) {
          out[n++] = w;
          found = true;
        }
      }
  }
  for (size_t tries = 0; n < VECTORS_PER_NR && tries < 4 * nc; ++tries) {
    const check* c = &cand[splitmix64(&s) % nc];
    if (!chosen_has(out, n, c->args)) out[n++] = *c;
  }
  free(cand);
  return n;
}

static void do_policy(FILE* out, const char* path, const char* incdir,
                      const char* test_checks, bool first) {
  size_t len;
  char* src = read_file(path, &len);
  if (!src) {
    perror(path);
    exit(2);
  }
  if (strlen(src) != len) {
    fprintf(stderr, "%s: contains NUL\n", path);
    exit(2);
  }
  kafel_ctxt_t ctxt = kafel_ctxt_create();
  kafel_set_input_string(ctxt, src);
  kafel_set_target_archs(ctxt, KAFEL_TARGET_ARCH_X86_64);
  if (incdir) kafel_add_include_search_path(ctxt, incdir);
  struct sock_fprog prog = {0, NULL};
  int rv = kafel_compile(ctxt, &prog);

  fputs(first ? "[\n" : ",\n", out);
  fputs("{\"policy\": ", out);
  json_string(out, path);
  fputs(", \"include_dir\": ", out);
  if (incdir)
    json_string(out, incdir);
  else
    fputs("null", out);
  if (rv != 0) {
    fputs(", \"compiles\": false, \"error\": ", out);
    json_string(out, kafel_error_msg(ctxt));
    fputs(", \"checks\": []}", out);
    kafel_ctxt_destroy(&ctxt);
    free(src);
    return;
  }
  kafel_ctxt_destroy(&ctxt);

  scan_state* st = calloc(1, sizeof *st);
  scan_text(st, src, incdir, 0);

  u64vec nrs = {0};
  for (size_t i = 0; i < st->nrs.n; ++i) u64_push_uniq(&nrs, st->nrs.v[i]);
  static const uint32_t fixed[] = {0, 1, 60, 231};
  for (size_t i = 0; i < 4; ++i) u64_push_uniq(&nrs, fixed[i]);
  uint64_t seed = SEED ^ fnv1a(path);
  for (;;) { /* one nr the policy does not name */
    uint32_t cand = table[splitmix64(&seed) % table_len].nr;
    if (!u64_has(&nrs, cand)) {
      u64_push(&nrs, cand);
      break;
    }
  }
  qsort(nrs.v, nrs.n, sizeof(uint64_t), cmp_u64);

  /* value pool */
  u64vec pool = {0};
  static const uint64_t base[] = {0, 1, 2, 0xffffffffULL, 0xffffffffffffffffULL,
                                  0x100000000ULL};
  for (size_t i = 0; i < 6; ++i) u64_push_uniq(&pool, base[i]);
  qsort(st->numbers.v, st->numbers.n, sizeof(uint64_t), cmp_u64);
  u64vec derived = {0}; /* constant-derived values, preferred in vectors */
  for (size_t i = 0; i < st->numbers.n; ++i) {
    uint64_t c = st->numbers.v[i];
    uint64_t d[4] = {c, c - 1, c + 1, c | 0x100000000ULL};
    for (int k = 0; k < 4; ++k) {
      u64_push_uniq(&pool, d[k]);
      u64_push_uniq(&derived, d[k]);
    }
  }
  u64_push_uniq(&pool, splitmix64(&seed));
  u64_push_uniq(&pool, splitmix64(&seed));

  size_t ntest = 0;
  if (test_checks)
    for (const char* q = test_checks; q; q = strchr(q + 1, ';')) ntest++;
  size_t ncap = nrs.n * VECTORS_PER_NR + ntest, nchecks = 0;
  check* checks = calloc(ncap, sizeof *checks);
  for (const char* q = test_checks; q && *q;) {
    check* c = &checks[nchecks++];
    char* e;
    c->nr = (uint32_t)strtoul(q, &e, 10);
    for (int a = 0; a < 6; ++a) c->args[a] = strtoull(e + 1, &e, 10);
    uint32_t want = (uint32_t)strtoul(e + 1, &e, 16);
    c->ret = run_bpf(&prog, c->nr, c->args, path);
    if (c->ret != want) {
      fprintf(stderr, "%s: kafel test verdict mismatch nr %" PRIu32
              ": got 0x%08" PRIx32 ", test expects 0x%08" PRIx32 "\n",
              path, c->nr, c->ret, want);
      exit(4);
    }
    q = *e == ';' ? e + 1 : NULL;
  }
  for (size_t i = 0; i < nrs.n; ++i)
    nchecks += select_vectors(&prog, path, (uint32_t)nrs.v[i], &pool, &derived,
                              &checks[nchecks]);
  qsort(checks, nchecks, sizeof *checks, cmp_check);
  fputs(", \"compiles\": true, \"error\": null, \"checks\": [", out);
  bool firstc = true;
  for (size_t i = 0; i < nchecks; ++i) {
    if (i > 0 && cmp_check(&checks[i - 1], &checks[i]) == 0) continue;
    fprintf(out, "%s\n  {\"nr\": %" PRIu32 ", \"args\": [", firstc ? "" : ",",
            checks[i].nr);
    for (int a = 0; a < 6; ++a)
      fprintf(out, "%s\"%" PRIu64 "\"", a ? ", " : "", checks[i].args[a]);
    fprintf(out, "], \"ret\": \"0x%08" PRIx32 "\"}", checks[i].ret);
    firstc = false;
  }
  fputs("]}", out);

  free(checks);
  free(pool.v);
  free(derived.v);
  free(nrs.v);
  free(st->nrs.v);
  free(st->numbers.v);
  for (size_t i = 0; i < st->nvisited; ++i) free(st->visited[i]);
  free(st);
  free(prog.filter);
  free(src);
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s AMD64_TSV MANIFEST OUT.json\n", argv[0]);
    return 2;
  }
  load_table(argv[1]);
  FILE* m = fopen(argv[2], "r");
  if (!m) {
    perror(argv[2]);
    return 2;
  }
  FILE* out = fopen(argv[3], "w");
  if (!out) {
    perror(argv[3]);
    return 2;
  }
  static char line[1 << 16];
  bool first = true;
  while (fgets(line, sizeof line, m)) {
    line[strcspn(line, "\n")] = '\0';
    if (!line[0]) continue;
    char* tab = strchr(line, '\t');
    const char* incdir = NULL;
    const char* test_checks = NULL;
    if (tab) {
      *tab = '\0';
      char* tab2 = strchr(tab + 1, '\t');
      if (tab2) {
        *tab2 = '\0';
        if (strcmp(tab2 + 1, "-") != 0) test_checks = tab2 + 1;
      }
      if (strcmp(tab + 1, "-") != 0) incdir = tab + 1;
    }
    do_policy(out, line, incdir, test_checks, first);
    first = false;
  }
  fputs(first ? "[]\n" : "\n]\n", out);
  fclose(m);
  fclose(out);
  return 0;
}
