"""Deliberately slow numpy references written from the papers' formulas (loops, no recursion tricks)."""

import numpy as np


def vtrace_ref(mu_logp, pi_logp, r, disc, v, boot, clip_rho=1.0, clip_c=1.0, clip_pg=1.0, lam=1.0):
    """IMPALA eq. 1 as a sum: v_s = V(x_s) + sum_t (prod_{i<t} gamma_i c_i) delta_t."""
    T, B = r.shape
    lam = np.broadcast_to(np.asarray(lam, dtype=np.float64), (T, B))
    rho = np.exp(pi_logp - mu_logp)
    vs = np.zeros((T, B))
    pg = np.zeros((T, B))
    for b in range(B):
        v_next = [v[t + 1, b] if t + 1 < T else boot[b] for t in range(T)]
        delta = [min(clip_rho, rho[t, b]) * (r[t, b] + disc[t, b] * v_next[t] - v[t, b]) for t in range(T)]
        for s in range(T):
            total, coef = 0.0, 1.0
            for t in range(s, T):
                total += coef * delta[t]
                coef *= disc[t, b] * lam[t, b] * min(clip_c, rho[t, b])
            vs[s, b] = v[s, b] + total
        for s in range(T):
            vs_next = vs[s + 1, b] if s + 1 < T else boot[b]
            pg[s, b] = min(clip_pg, rho[s, b]) * (r[s, b] + disc[s, b] * vs_next - v[s, b])
    return vs, pg


def gae_ref(r, disc, v, boot, lam):
    T, B = r.shape
    lam = np.broadcast_to(np.asarray(lam, dtype=np.float64), (T, B))
    adv = np.zeros((T, B))
    for b in range(B):
        for t in range(T):
            total, coef = 0.0, 1.0
            for k in range(t, T):
                v_next = v[k + 1, b] if k + 1 < T else boot[b]
                total += coef * (r[k, b] + disc[k, b] * v_next - v[k, b])
                coef *= disc[k, b] * lam[k, b]
            adv[t, b] = total
    return adv


def lambda_return_ref(r, disc, v, boot, lam):
    """Sutton & Barto 12.18: G_t = r_t + gamma_t((1-lam) V(x_{t+1}) + lam G_{t+1}), G_T = V(x_T)."""
    T, B = r.shape
    out = np.zeros((T, B))
    for b in range(B):
        g = boot[b]
        for t in reversed(range(T)):
            v_next = v[t + 1, b] if t + 1 < T else boot[b]
            g = r[t, b] + disc[t, b] * ((1 - lam) * v_next + lam * g)
            out[t, b] = g
    return out


def n_step_ref(r, disc, v_tp1, n):
    T, B = r.shape
    out = np.zeros((T, B))
    for b in range(B):
        for t in range(T):
            g, coef = 0.0, 1.0
            last = min(t + n, T) - 1
            for k in range(t, last + 1):
                g += coef * r[k, b]
                coef *= disc[k, b]
            out[t, b] = g + coef * v_tp1[last, b]
    return out
