"""tokenmath: the roofline math of LLM training and serving, with every number's derivation.

Start with `tokenmath lecture`, or from Python:

    from tokenmath import load_model, load_system, serve
    r = serve(load_model("deepseek-v3"), load_system("gb200-nvl72"), G=64, B=1024, S=4096)
    print(r.value("decode.step_time_s"))
"""

__version__ = "0.1.0"

from .core.arch import kv_bytes_per_token, param_counts  # noqa: E402
from .core.derive import Q, formula  # noqa: E402
from .core.load import CatalogError, load_chip, load_model, load_priors, load_system  # noqa: E402
from .core.roofline import Step, hardware_ratio, latency_floor, optimal_batch, step  # noqa: E402
from .serving.serve import ServeReport, serve  # noqa: E402

__all__ = [
    "__version__", "Q", "formula", "CatalogError", "load_chip", "load_model", "load_priors", "load_system",
    "param_counts", "kv_bytes_per_token", "step", "Step", "hardware_ratio", "optimal_batch", "latency_floor",
    "serve", "ServeReport",
]
