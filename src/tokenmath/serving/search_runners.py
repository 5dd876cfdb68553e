"""What runs a deployment search's tasks: in this process, a local process pool, or Ray.

A runner has one verb, `map(fn, items, on_done=None) -> list`: fn(item) for every item, the results
in the items' order whatever order they finished in (so answers do not depend on the runner), and
`on_done(i)` called as item i finishes (a progress bar). fn and the items must pickle: tasks carry the
catalog records themselves, so workers read no catalog and see every --set.

- `LocalRunner(workers)`: workers = 1 runs in this process; more, a `concurrent.futures` process pool,
  started when the runner is entered (before any progress-bar thread), by fork where the platform
  has it (the workers inherit the imported code: no start-up import) and by spawn elsewhere.
- `RayRunner(address, num_cpus)`: `ray.init(address)` joins a cluster (tokenmath's own code travels
  to it as a `py_modules` runtime environment, so the cluster runs this version); `address=None`
  starts a local Ray instance with `num_cpus` CPUs and shuts it down afterwards. Ray is the `ray`
  extra, imported here only.
"""

from __future__ import annotations

import os
from typing import Callable

from ..core.errors import InputError

__all__ = ["LocalRunner", "RayRunner", "default_workers"]


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def _check_workers(n: int) -> int:
    if not 1 <= int(n) <= 4096:
        raise InputError(f"--workers must be from 1 to 4096 (got {n})")
    return int(n)


class LocalRunner:
    """Tasks in this process (1 worker) or in a pool of local processes."""

    def __init__(self, workers: int | None = None):
        self.workers = _check_workers(workers or default_workers())
        self._pool = None

    def describe(self) -> str:
        return "in process" if self.workers == 1 else f"local pool, {self.workers} processes"

    def __enter__(self):
        if self.workers > 1:
            self._start()
        return self

    def __exit__(self, *exc):
        self.close()

    def _start(self) -> None:
        if self._pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            methods = multiprocessing.get_all_start_methods()
            ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
            self._pool = ProcessPoolExecutor(self.workers, mp_context=ctx)
            list(self._pool.map(int, range(self.workers)))  # start the workers now

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def map(self, fn: Callable, items: list, on_done: Callable[[int], None] | None = None) -> list:
        if self.workers == 1 or len(items) <= 1:
            out = []
            for i, x in enumerate(items):
                out.append(fn(x))
                if on_done:
                    on_done(i)
            return out
        from concurrent.futures import as_completed

        self._start()  # kept for the runner's life: the confirmations reuse the warm workers
        futures = {self._pool.submit(fn, x): i for i, x in enumerate(items)}
        out: list = [None] * len(items)
        for f in as_completed(futures):
            i = futures[f]
            out[i] = f.result()
            if on_done:
                on_done(i)
        return out


class RayRunner:
    """Tasks as Ray tasks: on a cluster at `address`, or on a local instance of `num_cpus` CPUs."""

    def __init__(self, address: str | None = None, num_cpus: int | None = None):
        try:
            import ray
        except ImportError:
            raise InputError("--ray needs Ray: pip install 'tokenmath[ray]'") from None
        self.ray, self.address = ray, address
        self.num_cpus = None if address else _check_workers(num_cpus or default_workers())
        self._started = False
        self._remote: dict = {}

    def describe(self) -> str:
        return f"ray cluster at {self.address}" if self.address else f"ray, local instance of {self.num_cpus} CPUs"

    def __enter__(self):
        ray = self.ray
        if not ray.is_initialized():
            if self.address:
                import tokenmath

                try:
                    ray.init(address=self.address, runtime_env={"py_modules": [tokenmath]}, log_to_driver=False)
                except (ConnectionError, ValueError, RuntimeError) as e:
                    raise InputError(f"--ray {self.address}: cannot join the cluster ({e})") from None
            else:
                ray.init(num_cpus=self.num_cpus, include_dashboard=False, log_to_driver=False,
                         configure_logging=False)
            self._started = True
        return self

    def __exit__(self, *exc):
        if self._started:
            self.ray.shutdown()
            self._started = False

    def map(self, fn: Callable, items: list, on_done: Callable[[int], None] | None = None) -> list:
        ray = self.ray
        if not ray.is_initialized():
            raise RuntimeError("RayRunner.map outside `with RayRunner(...)`")
        remote = self._remote.get(fn)
        if remote is None:
            remote = self._remote[fn] = ray.remote(num_cpus=1)(fn)
        refs = [remote.remote(x) for x in items]
        index = {r: i for i, r in enumerate(refs)}
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            if on_done:
                for r in ready:
                    on_done(index[r])
        return ray.get(refs)
