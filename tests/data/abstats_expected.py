#!/usr/bin/python3
"""How the expected values in tests/test_tools_abstats.c were derived.

Independent of the C code: SciPy (1.10) where it has the method, brute force
otherwise -- every split of the pooled sample for the tie-conditional exact
p values, the explicit list of differences for Hodges-Lehmann, exact integer
counts of U for its critical values, exact binomial sums for the sign test.
Run it with the system python (/usr/bin/python3) and paste what it prints.
"""
from fractions import Fraction
from itertools import combinations
from math import comb, floor, sqrt

from scipy import stats


def u_stat(b, m):
    """U of measure over base, by counting pairs."""
    return sum((y > x) + 0.5 * (y == x) for x in b for y in m)


def mwu_enum(b, m):
    """p_greater, p_less, p_two over every split of the pooled sample."""
    pool, nm = b + m, len(m)
    obs, ge, le, tot = u_stat(b, m), 0, 0, 0
    for idx in combinations(range(len(pool)), nm):
        s = set(idx)
        mm = [pool[i] for i in idx]
        bb = [pool[i] for i in range(len(pool)) if i not in s]
        u = u_stat(bb, mm)
        ge += u >= obs
        le += u <= obs
        tot += 1
    pg, pl = ge / tot, le / tot
    return obs, pg, pl, min(1.0, 2 * min(pg, pl)), tot


def mwu_scipy(b, m, method):
    r = [stats.mannwhitneyu(m, b, alternative=a, method=method) for a in ("greater", "less", "two-sided")]
    return r[0].statistic, r[0].pvalue, r[1].pvalue, r[2].pvalue


def u_counts(nb, nm):
    """Exact counts of U = 0 .. nb nm under the no-ties null (integers):
    f(a, c) over a base and c measure values, by whether the largest value
    is a measure one (it then beats all a base values) or a base one."""
    f = {}
    def go(a, c):
        if (a, c) in f:
            return f[a, c]
        if a == 0 or c == 0:
            r = [1]
        else:
            x, y = go(a, c - 1), go(a - 1, c)
            r = [0] * (a * c + 1)
            for u, v in enumerate(x):
                r[u + a] += v
            for u, v in enumerate(y):
                r[u] += v
        f[a, c] = r
        return r
    return go(nb, nm)


def u_counts_enum(nb, nm):
    n = nb + nm
    r = [0] * (nb * nm + 1)
    for idx in combinations(range(1, n + 1), nm):
        r[sum(idx) - nm * (nm + 1) // 2] += 1
    return r


def hl_exact(b, m, level):
    d = sorted(y - x for x in b for y in m)
    nd = len(d)
    est = d[nd // 2] if nd % 2 else Fraction(d[nd // 2 - 1] + d[nd // 2], 2)
    cnt = u_counts(len(b), len(m))
    tot = sum(cnt)
    tail = (1 - Fraction(level).limit_denominator(1000)) / 2
    k, cum, p = 0, 0, Fraction(0)
    for u, c in enumerate(cnt):
        cum += c
        if Fraction(cum, tot) > tail:
            break
        k, p = u + 1, Fraction(cum, tot)
    if k < 1:
        return float(est), d[0], d[-1], 1.0, k
    return float(est), d[k - 1], d[nd - k], float(1 - 2 * p), k


def hl_approx(b, m, level):
    d = sorted(y - x for x in b for y in m)
    nd = len(d)
    est = d[nd // 2] if nd % 2 else (d[nd // 2 - 1] + d[nd // 2]) / 2
    n = len(b) + len(m)
    z = stats.norm.ppf((1 + level) / 2)
    arg = nd / 2 - z * sqrt(nd * (n + 1) / 12)
    k = max(0, floor(arg))
    return est, d[k - 1], d[nd - k], level, k, arg


def sign_exact(agree, n):
    return float(Fraction(sum(comb(n, i) for i in range(agree, n + 1)), 2 ** n))


def show(name, v):
    print(f"{name}: " + ", ".join(repr(x) for x in v))


b34, m34 = [10, 20, 30], [15, 25, 35, 45]
show("3v4 scipy exact", mwu_scipy(b34, m34, "exact"))
show("3v4 enum", mwu_enum(b34, m34))
b55, m55 = [100, 102, 104, 106, 108], [101, 105, 109, 111, 113]
show("5v5 scipy exact", mwu_scipy(b55, m55, "exact"))
show("5v5 enum", mwu_enum(b55, m55))
bt, mt = [10, 10, 20, 30, 30], [10, 20, 20, 30, 40]
show("ties 5v5 enum", mwu_enum(bt, mt))
bt2, mt2 = [1, 1, 1, 2, 2, 3], [1, 2, 3, 3, 3, 3, 4]
show("ties 6v7 enum", mwu_enum(bt2, mt2))
bt3, mt3 = [7, 7, 7, 7, 7, 7, 7, 9], [7, 7, 7]
show("ties 8v3 enum", mwu_enum(bt3, mt3))
show("all equal enum", mwu_enum([5, 5, 5], [5, 5, 5, 5]))

bs = [1000 + (i * 7) % 20 for i in range(20)]
ms = [(x * 11) // 10 for x in bs]
show("shift 20v20 scipy exact", mwu_scipy(bs, ms, "exact"))
print("  1/C(40,20) =", repr(1 / comb(40, 20)))

b50, m50 = [3 * i for i in range(50)], [3 * j + 11 for j in range(50)]
show("50v50 scipy exact", mwu_scipy(b50, m50, "exact"))
b51 = [3 * i for i in range(51)]
show("51v50 scipy asymptotic", mwu_scipy(b51, m50, "asymptotic"))

bl = [1000 + (i * 37) % 101 for i in range(150)]
ml = [1004 + (i * 53) % 97 for i in range(150)]
show("150v150 scipy asymptotic", mwu_scipy(bl, ml, "asymptotic"))

assert u_counts(5, 5) == u_counts_enum(5, 5) and u_counts(3, 6) == u_counts_enum(3, 6)
show("hl odd 3v3", hl_exact([1, 5, 9], [2, 8, 20], 0.95))
show("hl even 2v3", hl_exact([4, 10], [5, 10, 16], 0.95))
show("hl 5v5 0.95", hl_exact(b55, m55, 0.95))
show("hl 5v5 0.90", hl_exact(b55, m55, 0.90))
b25 = [5000 + (i * 13) % 29 * 3 for i in range(25)]
m25 = [5010 + (j * 11) % 31 * 3 for j in range(25)]
show("hl 25v25 0.95", hl_exact(b25, m25, 0.95))
show("hl 2v2 0.95", hl_exact([10, 20], [13, 30], 0.95))
show("hl 3v3 0.90", hl_exact([1, 2, 3], [4, 5, 6], 0.90))
show("hl 150v150 0.95", hl_approx(bl, ml, 0.95))
show("hl 150v150 0.99", hl_approx(bl, ml, 0.99))
bh = [100000 + (i * 7919) % 10007 for i in range(2000)]
mh = [100500 + (i * 104729) % 10009 for i in range(2000)]
show("2000v2000 scipy asymptotic", mwu_scipy(bh, mh, "asymptotic"))
show("hl 2000v2000 0.95", hl_approx(bh, mh, 0.95))
M = 2 ** 63 - 1
show("hl extremes 2v2", hl_exact([0, M], [M, 0], 0.95))

for a, n in [(5, 5), (4, 5), (0, 7), (40, 62), (31, 62), (40, 63), (530, 1000), (1400, 3000), (3000, 5000),
             (2600, 5000)]:
    p = sign_exact(a, n)
    q = stats.binomtest(a, n, 0.5, alternative="greater").pvalue
    print(f"sign {a}/{n}: exact {p!r} binomtest {q!r}")
