#!/usr/bin/env python3
"""Generate deterministic random kafel policies for the kafel oracle.

  random/random_NNN.policy        300 policies, one argument per comparison
  random_argarg/argarg_NN.policy   40 policies that compare two arguments

Argument names and sizes come from kafel's amd64 table
(importers/kafel/tables/amd64.tsv, extracted from google/kafel
src/syscalls/amd64_syscalls.c). Every policy is meant to compile with kafel
for x86_64; gen_oracle records whether it does.

Features exercised (random/): several action blocks with ALLOW, LOG, KILL,
KILL_THREAD, DENY, KILL_PROCESS, USER_NOTIF, ERRNO(n), TRAP(n), TRACE(n); the
same syscall in several blocks (first match wins); conditions `arg OP c` for
== != < <= > >=, `(arg & m) == v`, `(arg & m) != v`, `arg & m == v` (kafel
precedence), `arg | c == v`, `arg == c1|c2`; combined with && || ! `,` and
parentheses; constants above 32 bits and negative decimals; #define'd
constants (sometimes redefined with the same value); POLICY + USE (a policy is
sometimes USEd twice); DEFAULT of every kind or absent; declared argument lists
`name(a,b,c)` (all declared args are 64-bit in kafel); `name {}` and bare names.

Usage: gen_random.py --table amd64.tsv --out DIR [--seed N]
"""
import argparse
import os
import random
import shutil

SEED = 20260404

# ~20 common x86_64 syscalls, with a mix of 4-byte and 8-byte args in kafel's
# amd64 table (write.fd:4, write.count:8, mmap.*:8, openat.mode:2, writev.fd:8).
SYSCALLS = ["read", "write", "close", "openat", "mmap", "mprotect", "munmap",
            "ioctl", "fcntl", "lseek", "socket", "connect", "clone", "prctl",
            "futex", "kill", "getpid", "exit", "exit_group", "dup3", "writev",
            "madvise"]

ACTIONS = ["ALLOW", "LOG", "KILL", "KILL_PROCESS", "USER_NOTIF", "ERRNO", "TRAP",
           "TRACE", "DENY", "KILL_THREAD"]
ACTION_WEIGHTS = [6, 2, 3, 3, 2, 5, 2, 2, 1, 1]


def load_table(path):
    t = {}
    for line in open(path, encoding="utf-8"):
        cols = line.rstrip("\n").split("\t")
        t[cols[0]] = [tuple(a.rsplit(":", 1)) for a in cols[2:]]
    return t


class Gen:
    def __init__(self, rng, table, argarg=False):
        self.r = rng
        self.t = table
        self.argarg = argarg
        self.defines = {}  # name -> literal text
        self.argarg_count = 0  # comparisons between two args

    # ---- numbers ----
    def raw_value(self):
        r = self.r
        k = r.random()
        if k < 0.40:
            return r.choice([0, 1, 2, 3, 4, 5, 7, 8, 16, 64, 255, 4096])
        if k < 0.55:
            return r.choice([0x7fffffff, 0x80000000, 0xffffffff, 0xfffffffe, 0xffff,
                             0x10000, 0x1234])
        if k < 0.75:
            return r.choice([0x100000000, 0x100000001, 0xffffffff00000000,
                             0x1ffffffff, 0x8000000000000000, 0xffffffffffffffff,
                             0x100001234])
        if k < 0.85:
            return r.getrandbits(64)
        return r.getrandbits(r.choice([3, 8, 12, 16, 31, 32]))

    def literal(self, v=None):
        r = self.r
        if v is None:
            v = self.raw_value()
        k = r.random()
        if v >= 0xffffffffffff0000 and k < 0.5:
            return "-%d" % (2 ** 64 - v)  # kafel wraps -N modulo 2^64
        if k < 0.45:
            return "0x%x" % v
        if k < 0.9 or v == 0:
            return "%d" % v
        if k < 0.95 and v < 2 ** 20:
            return "0b{0:b}".format(v)
        return "0%o" % v  # octal

    def const(self):
        """A constant operand: literal or #define'd name."""
        r = self.r
        if self.defines and r.random() < 0.3:
            return r.choice(sorted(self.defines))
        if r.random() < 0.12:
            name = "K_%d" % len(self.defines)
            self.defines[name] = self.literal()
            return name
        return self.literal()

    def mask_value(self):
        r = self.r
        return r.choice([1, 2, 3, 4, 0xf, 0xff, 0xf0, 0xffff0000, 0xffffffff,
                         0xffffffff00000000, 0x100000000, 0x80000000,
                         0x8000000000000001, r.getrandbits(64), r.getrandbits(16)])

    def mask(self):
        return self.literal(self.mask_value())

    def masked_pair(self):
        """(mask, value) for (arg & mask) ==/!= value; value usually within mask."""
        r = self.r
        m = self.mask_value()
        k = r.random()
        if k < 0.3:
            v = 0
        elif k < 0.6:
            v = m
        elif k < 0.85:
            v = m & r.getrandbits(64)
        else:
            v = self.raw_value()
        return self.literal(m), self.literal(v)

    def or_pair(self):
        """(c, v) for arg | c == v; v usually a superset of c."""
        r = self.r
        c = self.mask_value()
        v = c | r.choice([0, 1, 2, 0x10, r.getrandbits(8), r.getrandbits(40)]) \
            if r.random() < 0.85 else self.raw_value()
        return self.literal(c), self.literal(v)

    # ---- expressions ----
    def comparison(self, args):
        r = self.r
        a = r.choice(args)
        if self.argarg and len(args) >= 2 and r.random() < 0.6:
            b = r.choice([x for x in args if x != a])
            self.argarg_count += 1
            form = r.randrange(6)
            if form == 0:
                return "%s %s %s" % (a, r.choice(["==", "!=", "<", "<=", ">", ">="]), b)
            if form == 1:
                return "(%s | %s) == %s" % (a, b, self.const())
            if form == 2:
                return "(%s & %s) %s %s" % (a, b, r.choice(["==", "!="]), self.const())
            if form == 3:
                return "%s & %s == %s" % (a, self.mask(), b)
            if form == 4:
                return "%s == %s | %s" % (a, b, self.const())
            return "%s %s %s" % (self.const(), r.choice(["<", ">="]), b)
        form = r.choices(range(8), weights=[10, 3, 3, 2, 2, 2, 1, 1])[0]
        if form == 0:
            op = r.choice(["==", "!=", "<", "<=", ">", ">="])
            return "%s %s %s" % (a, op, self.const())
        if form == 1:
            return "(%s & %s) == %s" % ((a,) + self.masked_pair())
        if form == 2:
            return "(%s & %s) != %s" % ((a,) + self.masked_pair())
        if form == 3:
            m, v = self.masked_pair()
            return "%s & %s %s %s" % (a, m, r.choice(["==", "!="]), v)
        if form == 4:
            return "%s | %s == %s" % ((a,) + self.or_pair())
        if form == 5:
            return "%s == %s|%s" % (a, self.const(), self.const())
        if form == 6:
            return "%s %s %s" % (self.const(), r.choice(["<", ">", "=="]), a)
        return "%s != %s | %s | %s" % (a, self.const(), self.const(), self.const())

    def primary(self, args, depth):
        r = self.r
        k = r.random()
        if depth > 0 and k < 0.10:
            return "!(%s)" % self.bool_expr(args, depth - 1)
        if depth > 0 and k < 0.22:
            return "(%s)" % self.bool_expr(args, depth - 1)
        if k < 0.27:
            return "!" + self.comparison(args)
        return self.comparison(args)

    def and_expr(self, args, depth):
        n = self.r.choices([1, 2, 3], weights=[8, 3, 1])[0]
        return " && ".join(self.primary(args, depth) for _ in range(n))

    def or_expr(self, args, depth):
        n = self.r.choices([1, 2, 3], weights=[8, 3, 1])[0]
        return " || ".join(self.and_expr(args, depth) for _ in range(n))

    def bool_expr(self, args, depth=2):
        n = self.r.choices([1, 2], weights=[8, 1])[0]
        return ", ".join(self.or_expr(args, depth) for _ in range(n))

    # ---- rules ----
    def action(self):
        a = self.r.choices(ACTIONS, weights=ACTION_WEIGHTS)[0]
        if a in ("ERRNO", "TRAP", "TRACE"):
            n = self.r.choice([0, 1, 2, 13, 38, 1337, 65535, self.r.randrange(65536)])
            return "%s(%d)" % (a, n)
        return a

    def syscall_filter(self, name):
        r = self.r
        table_args = [a for a, _ in self.t[name] if a != "-"]
        declared = None
        if r.random() < 0.2:
            n = r.randint(max(1, len(table_args) - 1), min(6, max(1, len(table_args)) + 1))
            declared = ["x%d" % i for i in range(n)]
        args = declared or table_args
        head = name + ("(%s)" % ", ".join(declared) if declared else "")
        k = r.random()
        if not args or k < 0.2:
            return head if r.random() < 0.8 else head + " {}"
        if self.argarg and len(args) < 2:
            return head
        return "%s { %s }" % (head, self.bool_expr(args))

    def action_block(self, pool):
        r = self.r
        names = r.sample(pool, r.randint(1, min(3, len(pool))))
        filters = [self.syscall_filter(n) for n in names]
        sep = ",\n  " if r.random() < 0.7 else ", "
        return "%s {\n  %s\n}" % (self.action(), sep.join(filters))

    def policy(self):
        r = self.r
        usable = [s for s in SYSCALLS if not self.argarg or
                  len([a for a, _ in self.t[s] if a != "-"]) >= 2]
        pool = r.sample(usable, r.randint(2, 5))
        out = []
        stmts_defs = []
        # named policies
        policies = []
        for i in range(r.choices([0, 1, 2, 3], weights=[3, 4, 2, 1])[0]):
            entries = []
            if policies and r.random() < 0.4:
                entries.append("USE " + r.choice(policies))
            for _ in range(r.randint(0, 2) if entries else r.randint(1, 2)):
                entries.append(self.action_block(pool))
            name = "p%d" % i
            body = ",\n".join(entries)
            out.append(("POLICY %s {\n%s\n}" % (name, body)) if entries else
                       "POLICY %s {}" % name)
            policies.append(name)
        # top-level statements
        top = []
        used_twice = False
        for _ in range(r.randint(1, 4)):
            if policies and r.random() < 0.35:
                top.append("USE " + r.choice(policies))
            else:
                top.append(self.action_block(pool))
        if policies:
            p = r.choice(policies)
            top.insert(r.randrange(len(top) + 1), "USE " + p)
            if r.random() < 0.5:  # the same policy USEd twice
                top.insert(r.randrange(len(top) + 1), "USE " + p)
                used_twice = True
        # top-level statements: newline, or sometimes a comma, between them
        text = top[0]
        for s in top[1:]:
            text += (",\n" if r.random() < 0.3 else "\n") + s
        default = r.choice([None, None, "ALLOW", "KILL", "KILL_PROCESS", "LOG",
                            "USER_NOTIF", "ERRNO(1)", "TRAP(7)", "TRACE(9)", "DENY",
                            "KILL_THREAD", "ERRNO(0)"])
        # #defines go first (kafel resolves constants where they are used)
        for name in sorted(self.defines, key=lambda n: int(n[2:])):
            stmts_defs.append("#define %s %s" % (name, self.defines[name]))
            if r.random() < 0.1:  # redefinition with the same value is legal
                stmts_defs.append("#define %s %s" % (name, self.defines[name]))
        parts = stmts_defs + out
        if default and r.random() < 0.2:
            parts.append("DEFAULT " + default)
            parts.append(text)
        else:
            parts.append(text)
            if default:
                parts.append("DEFAULT " + default)
        header = "// random kafel policy (tools/gen_random.py)%s\n" % (
            ", a policy USEd twice" if used_twice else "")
        return header + "\n".join(parts) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=SEED)
    a = ap.parse_args()
    table = load_table(a.table)
    for s in SYSCALLS:
        assert s in table, s
    for sub, count, argarg, fmt in (("random", 300, False, "random_%03d.policy"),
                                    ("random_argarg", 40, True, "argarg_%02d.policy")):
        d = os.path.join(a.out, sub)
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(d)
        for i in range(count):
            rng = random.Random("%d/%s/%d" % (a.seed, sub, i))
            while True:
                g = Gen(rng, table, argarg)
                text = g.policy()
                if not argarg or g.argarg_count > 0:
                    break
            with open(os.path.join(d, fmt % i), "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        print("%s: %d policies" % (sub, count))


if __name__ == "__main__":
    main()
