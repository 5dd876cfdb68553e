"""Training: FLOP, time and cost of a run (runs), memory per chip (memory), the bubble and a split (splits),
published runs predicted (rows), and the compute balance of a model's life (lifecycle)."""

from .memory import OPTIMIZER_BYTES_PER_PARAM, activation_bytes, state_bytes
from .rows import CARRY, is_training_row, predict_training_row, training_quantity, validate_training
from .runs import RECOMPUTE, TrainReport, flop_dense, recompute_ratio, select_prior, train
from .splits import Split, pipeline_bubble, search_splits

__all__ = ["TrainReport", "Split", "train", "search_splits", "select_prior", "pipeline_bubble", "activation_bytes",
           "state_bytes", "recompute_ratio", "predict_training_row", "validate_training",
           "training_quantity", "is_training_row", "RECOMPUTE",
           "OPTIMIZER_BYTES_PER_PARAM", "CARRY", "flop_dense"]
