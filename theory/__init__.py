"""Numerical checks of the paper's theory (Sec. 3, Theorem 3.2 "Adaptive policies
require epistemic credit"; App. A). Theorem numbers are those of the compiled paper, where
Proposition "Belief-state sufficiency" is 3.1.

  bit_reveal       Theorem "Adaptive policies can strictly outperform belief-agnostic
                   policies": the bit-reveal EDP E_d, exact enumeration, Monte Carlo, learners.
  return_aliasing  Theorem "Spectral aliasing of trajectory-level credit" and its finite
                   corollary: Bayesian advantage vs total return on a small enumerable EDP.

Run each as `python -m theory.<name> [--flags]`; outputs go to theory/out/ by default.
"""
