"""The benchmark cases, one module each, in the order of the table. Each module has

    TITLE                         the heading of its table
    children(quick) -> [params]   the child processes to run per library and round (params is a
                                  JSON-able dict; "threads", "env" and "repeats" are read by the
                                  driver too: intra-op threads, extra environment, a cap on rounds)
    run(lib_name, params) -> {}   in the child: its figures, by key
    rows(results, machine)        the table rows, from {key: (tensorplay median, PyTorch median)}
"""

CASES = ("gemm", "elementwise", "reductions", "overhead", "training", "fashion_mnist", "memory", "sequence_models",
         "linear_algebra", "complex_numbers", "data_pipeline", "distributed", "scientific")
