"""qosbound.analytic: closed forms in SymPy, cited to their source equations, lambdified for numbers."""
