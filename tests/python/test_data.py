"""tensorplay.utils.data against torch.utils.data: datasets, samplers, collation and the DataLoader.

Random orders cannot match torch's (the generators differ), so shuffling is checked for its
properties instead: a permutation every epoch, reproducible from a seed, different across seeds.
"""

import collections
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tdata

import tensorplay as tp
import tensorplay.utils.data as data

Point = collections.namedtuple("Point", ["x", "y"])


# ---- helpers ----

def dtype_name(dtype):
    return str(dtype).split(".")[-1]


def assert_matches_torch(ours, theirs, path="batch"):
    """ours (tensorplay) has the same structure, container types, dtypes and values as theirs (torch)."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, tp.Tensor), f"{path}: expected a tensor, got {type(ours).__name__}"
        assert dtype_name(ours.dtype) == dtype_name(theirs.dtype), f"{path}: dtype"
        assert tuple(ours.shape) == tuple(theirs.shape), f"{path}: shape"
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=path)
    elif isinstance(theirs, tuple) and hasattr(theirs, "_fields"):
        assert type(ours) is type(theirs), f"{path}: {type(ours).__name__} is not {type(theirs).__name__}"
        for field in theirs._fields:
            assert_matches_torch(getattr(ours, field), getattr(theirs, field), f"{path}.{field}")
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs), f"{path}: {type(ours).__name__} is not {type(theirs).__name__}"
        assert len(ours) == len(theirs), f"{path}: length"
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_matches_torch(a, b, f"{path}[{i}]")
    elif isinstance(theirs, dict):
        assert type(ours) is type(theirs), f"{path}: {type(ours).__name__} is not {type(theirs).__name__}"
        assert list(ours) == list(theirs), f"{path}: keys"
        for key in theirs:
            assert_matches_torch(ours[key], theirs[key], f"{path}[{key!r}]")
    elif isinstance(theirs, np.ndarray):
        assert isinstance(ours, np.ndarray) and ours.dtype == theirs.dtype, path
        np.testing.assert_array_equal(ours, theirs, err_msg=path)
    else:
        assert type(ours) is type(theirs) and ours == theirs, f"{path}: {ours!r} != {theirs!r}"


def assert_raises_like_torch(ours, theirs, same_message=True):
    """Both callables raise the same exception class (and, by default, the same message)."""
    with pytest.raises(Exception) as torch_error:
        theirs()
    with pytest.raises(Exception) as our_error:
        ours()
    assert type(our_error.value) is type(torch_error.value), (our_error.value, torch_error.value)
    if same_message:
        assert str(our_error.value) == str(torch_error.value)


def tensors(lib, batch, dtype=None):
    """batch as a tensor of lib (torch or tensorplay), through NumPy so both get the same values."""
    array = np.asarray(batch)
    return lib.from_numpy(array if dtype is None else array.astype(dtype))


class Squares:
    """A map-style dataset that is not a Dataset subclass: sample i is (i, i * i)."""

    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return i, float(i * i)

    def __len__(self):
        return self.n


def make_stream(lib_data, n):
    class Stream(lib_data.IterableDataset):
        def __iter__(self):
            return iter(range(n))

        def __len__(self):
            return n

    return Stream()


def flatten(batches):
    return [int(i) for batch in batches for i in batch.tolist()]


# ---- datasets ----

def test_tensor_dataset_length_and_indexing_match_torch():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    y = np.array([0, 1, 0, 1])
    ours = data.TensorDataset(tp.from_numpy(x), tp.from_numpy(y))
    theirs = tdata.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
    assert len(ours) == len(theirs) == 4
    for i in (0, 3, -1):
        assert_matches_torch(ours[i], theirs[i])
    assert_matches_torch(ours[1:3], theirs[1:3])


def test_tensor_dataset_rejects_different_first_dims():
    assert_raises_like_torch(lambda: data.TensorDataset(tp.zeros(3), tp.zeros(4)),
                             lambda: tdata.TensorDataset(torch.zeros(3), torch.zeros(4)))


def test_dataset_base_class_requires_getitem():
    assert_raises_like_torch(lambda: data.Dataset()[0], lambda: tdata.Dataset()[0])


def test_subset_indexing_matches_torch():
    base = list(range(100, 110))
    ours, theirs = data.Subset(base, [7, 2, 5]), tdata.Subset(base, [7, 2, 5])
    assert len(ours) == len(theirs) == 3
    assert [ours[i] for i in range(3)] == [theirs[i] for i in range(3)] == [107, 102, 105]
    assert ours[-1] == theirs[-1]
    assert ours.__getitems__([2, 0]) == theirs.__getitems__([2, 0])


def test_concat_dataset_indexing_matches_torch_including_negative_indices():
    parts = [list(range(3)), [], list(range(10, 15)), ["a", "b"]]
    ours, theirs = data.ConcatDataset(parts), tdata.ConcatDataset(parts)
    assert len(ours) == len(theirs) == 10
    assert ours.cumulative_sizes == theirs.cumulative_sizes == [3, 3, 8, 10]
    assert [ours[i] for i in range(-10, 10)] == [theirs[i] for i in range(-10, 10)]
    assert_raises_like_torch(lambda: ours[-11], lambda: theirs[-11])
    assert_raises_like_torch(lambda: ours[10], lambda: theirs[10], same_message=False)


def test_concat_dataset_rejects_empty_and_iterable_inputs():
    assert_raises_like_torch(lambda: data.ConcatDataset([]), lambda: tdata.ConcatDataset([]))
    assert_raises_like_torch(lambda: data.ConcatDataset([make_stream(data, 2)]),
                             lambda: tdata.ConcatDataset([make_stream(tdata, 2)]))


def test_adding_datasets_concatenates_or_chains():
    class Items(data.Dataset):
        def __init__(self, items):
            self.items = items

        def __getitem__(self, i):
            return self.items[i]

        def __len__(self):
            return len(self.items)

    joined = Items([1, 2]) + Items([3])
    assert isinstance(joined, data.ConcatDataset)
    assert [joined[i] for i in range(len(joined))] == [1, 2, 3]
    chained = make_stream(data, 2) + make_stream(data, 3)
    assert isinstance(chained, data.ChainDataset)
    assert list(chained) == [0, 1, 0, 1, 2] and len(chained) == 5


def test_stack_dataset_matches_torch():
    a, b = list(range(4)), ["w", "x", "y", "z"]
    assert_matches_torch(data.StackDataset(a, b)[2], tdata.StackDataset(a, b)[2])
    assert_matches_torch(data.StackDataset(n=a, s=b).__getitems__([3, 1]),
                         tdata.StackDataset(n=a, s=b).__getitems__([3, 1]))
    assert_raises_like_torch(lambda: data.StackDataset(a, b[:2]), lambda: tdata.StackDataset(a, b[:2]))


# ---- random_split ----

@pytest.mark.parametrize("n, lengths", [
    (10, [3, 7]),
    (10, [0.3, 0.3, 0.4]),
    (11, [0.5, 0.5]),
    (7, [0.1, 0.2, 0.3, 0.4]),  # floors give 0+1+2+2, so the remainder 2 goes to the first two splits
    (30, [1 / 3] * 3),
])
def test_random_split_sizes_match_torch_and_parts_partition_the_dataset(n, lengths):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zero-length splits warn
        ours = data.random_split(range(n), lengths, generator=tp.Generator().manual_seed(0))
        theirs = tdata.random_split(range(n), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(part) for part in ours] == [len(part) for part in theirs]
    assert all(isinstance(part, data.Subset) for part in ours)
    items = [part[i] for part in ours for i in range(len(part))]
    assert sorted(items) == list(range(n))


def test_random_split_warns_about_empty_splits_like_torch():
    # Floors are [0, 0, 1]; the one leftover item goes to split 0, leaving split 1 empty.
    for lib in (data, tdata):
        with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
            parts = lib.random_split(range(2), [0.1, 0.1, 0.8])
        assert [len(part) for part in parts] == [1, 0, 1]


def test_random_split_is_reproducible_from_a_seed():
    def split(seed):
        parts = data.random_split(range(50), [20, 30], generator=tp.Generator().manual_seed(seed))
        return [list(part.indices) for part in parts]

    assert split(3) == split(3)
    assert split(3) != split(4)
    tp.manual_seed(5)
    first = [list(part.indices) for part in data.random_split(range(50), [0.5, 0.5])]
    tp.manual_seed(5)
    assert first == [list(part.indices) for part in data.random_split(range(50), [0.5, 0.5])]


@pytest.mark.parametrize("lengths", [[3, 3], [0.5, 0.6], [1.5, -0.5]])
def test_random_split_errors_match_torch(lengths):
    assert_raises_like_torch(lambda: data.random_split(range(10), lengths),
                             lambda: tdata.random_split(range(10), lengths))


# ---- default_collate / default_convert ----

def sample_batches(lib):
    """Batches (lists of samples) exercising every default_collate rule, built with lib's tensors."""
    return {
        "ints": [1, 2, 3],
        "floats": [0.5, 1.25],
        "bools": [True, False, True],
        "ints_and_floats": [1, 2.5],
        "strings": ["a", "bc"],
        "bytes": [b"x", b"y"],
        "float_tensors": [tensors(lib, [1.0, 2.0], np.float32), tensors(lib, [3.0, 4.0], np.float32)],
        "int_tensors_2d": [tensors(lib, [[1, 2]], np.int64), tensors(lib, [[3, 4]], np.int64)],
        "scalar_tensors": [tensors(lib, 1.5, np.float64), tensors(lib, 2.5, np.float64)],
        "numpy_arrays": [np.arange(3, dtype=np.int32), np.arange(3, 6, dtype=np.int32)],
        "numpy_float16": [np.ones((2, 2), np.float16), np.zeros((2, 2), np.float16)],
        "numpy_scalars": [np.float32(1.5), np.float32(2.5)],
        "numpy_bools": [np.bool_(True), np.bool_(False)],
        "tuples": [(1, "a", 0.5), (2, "b", 1.5)],
        "lists": [[1, 2], [3, 4]],
        "dicts": [{"x": tensors(lib, [1.0], np.float32), "label": 0, "name": "p"},
                  {"x": tensors(lib, [2.0], np.float32), "label": 1, "name": "q"}],
        "namedtuples": [Point(1, 0.5), Point(2, 1.5)],
        "nested": [
            {"pair": (tensors(lib, [1, 2], np.int64), Point(np.array([1.0]), True)), "meta": {"id": 7, "tags": ["t"]}},
            {"pair": (tensors(lib, [3, 4], np.int64), Point(np.array([2.0]), False)), "meta": {"id": 8, "tags": ["u"]}},
        ],
    }


COLLATE_CASES = list(sample_batches(tp))


@pytest.mark.parametrize("case", COLLATE_CASES)
def test_default_collate_matches_torch(case):
    assert_matches_torch(data.default_collate(sample_batches(tp)[case]),
                         tdata.default_collate(sample_batches(torch)[case]))


@pytest.mark.parametrize("case", COLLATE_CASES)
def test_default_convert_matches_torch(case):
    # default_convert sees one sample at a time; take the first one of each batch.
    assert_matches_torch(data.default_convert(sample_batches(tp)[case][0]),
                         tdata.default_convert(sample_batches(torch)[case][0]))


def test_default_convert_leaves_string_arrays_alone():
    array = np.array(["a", "b"])
    assert data.default_convert(array) is array


def test_default_collate_errors_match_torch():
    cases = [
        lambda lib: [tensors(lib, [1.0, 2.0]), tensors(lib, [1.0, 2.0, 3.0])],  # stack of unequal shapes
        lambda lib: [[1, 2], [3]],  # sequences of unequal length
        lambda lib: [object(), object()],  # unsupported type
        lambda lib: [np.array(["a"]), np.array(["b"])],  # string arrays
    ]
    for make in cases:
        # The messages name different classes/prefixes, so only the exception class is compared.
        assert_raises_like_torch(lambda: data.default_collate(make(tp)),
                                 lambda: tdata.default_collate(make(torch)), same_message=False)


# ---- samplers ----

def test_sequential_sampler():
    assert list(data.SequentialSampler(range(5))) == list(tdata.SequentialSampler(range(5))) == [0, 1, 2, 3, 4]
    assert len(data.SequentialSampler(range(5))) == 5


@pytest.mark.parametrize("kwargs", [
    dict(replacement=1),
    dict(num_samples=0),
    dict(num_samples=2.5),
    dict(num_samples=-3, replacement=True),
])
def test_random_sampler_argument_errors_match_torch(kwargs):
    assert_raises_like_torch(lambda: data.RandomSampler(range(4), **kwargs),
                             lambda: tdata.RandomSampler(range(4), **kwargs))


def test_random_sampler_on_an_empty_dataset_errors_like_torch():
    assert_raises_like_torch(lambda: data.RandomSampler([]), lambda: tdata.RandomSampler([]))


def test_random_sampler_without_replacement_draws_whole_permutations():
    sampler = data.RandomSampler(range(5), num_samples=12, generator=tp.Generator().manual_seed(1))
    drawn = list(sampler)
    assert len(sampler) == len(drawn) == 12
    assert sorted(drawn[:5]) == sorted(drawn[5:10]) == list(range(5))
    assert len(set(drawn[10:])) == 2


def test_random_sampler_with_replacement():
    sampler = data.RandomSampler(range(3), replacement=True, num_samples=70, generator=tp.Generator().manual_seed(1))
    drawn = list(sampler)
    assert len(sampler) == len(drawn) == 70
    assert set(drawn) == {0, 1, 2}
    assert drawn == list(data.RandomSampler(range(3), True, 70, generator=tp.Generator().manual_seed(1)))


def test_subset_random_sampler_permutes_the_given_indices():
    indices = [10, 20, 30, 40]
    drawn = list(data.SubsetRandomSampler(indices, generator=tp.Generator().manual_seed(2)))
    assert sorted(drawn) == indices
    assert drawn == list(data.SubsetRandomSampler(indices, generator=tp.Generator().manual_seed(2)))
    assert len(data.SubsetRandomSampler(indices)) == 4


def test_weighted_random_sampler_never_draws_zero_weights():
    weights = [0.0, 1.0, 3.0, 0.0]
    with_replacement = list(data.WeightedRandomSampler(weights, 200, generator=tp.Generator().manual_seed(0)))
    assert set(with_replacement) == {1, 2}
    assert with_replacement.count(2) > with_replacement.count(1)
    without = list(data.WeightedRandomSampler(weights, 2, replacement=False))
    assert sorted(without) == [1, 2]


@pytest.mark.parametrize("args", [([1.0, 2.0], 0), ([1.0, 2.0], 2, 1), ([[1.0, 2.0]], 2)])
def test_weighted_random_sampler_argument_errors_match_torch(args):
    assert_raises_like_torch(lambda: data.WeightedRandomSampler(*args), lambda: tdata.WeightedRandomSampler(*args))


@pytest.mark.parametrize("n, batch_size, drop_last", [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False),
                                                      (2, 5, True), (0, 2, False)])
def test_batch_sampler_matches_torch(n, batch_size, drop_last):
    order = [7, 3, 9, 1, 0, 2, 8, 4, 6, 5][:n]  # any fixed sampler, shared by both
    ours = data.BatchSampler(order, batch_size, drop_last)
    theirs = tdata.BatchSampler(order, batch_size, drop_last)
    assert list(ours) == list(theirs)
    assert len(ours) == len(theirs)
    seq = list(data.BatchSampler(data.SequentialSampler(range(n)), batch_size, drop_last))
    assert seq == list(tdata.BatchSampler(tdata.SequentialSampler(range(n)), batch_size, drop_last))


@pytest.mark.parametrize("batch_size, drop_last", [(0, False), (-1, False), (2.0, False), (True, False), (2, 1)])
def test_batch_sampler_argument_errors_match_torch(batch_size, drop_last):
    assert_raises_like_torch(lambda: data.BatchSampler(range(4), batch_size, drop_last),
                             lambda: tdata.BatchSampler(range(4), batch_size, drop_last))


# ---- DataLoader ----

@pytest.mark.parametrize("n, batch_size, drop_last", [(10, 3, False), (10, 3, True), (10, 5, True), (3, 4, False),
                                                      (3, 4, True), (1, 1, False)])
def test_loader_batches_match_torch(n, batch_size, drop_last):
    ours = data.DataLoader(Squares(n), batch_size=batch_size, drop_last=drop_last)
    theirs = tdata.DataLoader(Squares(n), batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    assert_matches_torch(list(ours), list(theirs))


def test_loader_over_a_tensor_dataset_matches_torch():
    x = np.random.default_rng(0).standard_normal((7, 2)).astype(np.float32)
    y = np.arange(7)
    ours = data.DataLoader(data.TensorDataset(tp.from_numpy(x), tp.from_numpy(y)), batch_size=3)
    theirs = tdata.DataLoader(tdata.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)), batch_size=3)
    assert_matches_torch(list(ours), list(theirs))


def test_loader_with_nested_samples_matches_torch():
    samples = {lib: sample_batches(lib)["nested"] * 3 for lib in (tp, torch)}
    ours = list(data.DataLoader(samples[tp], batch_size=4))
    theirs = list(tdata.DataLoader(samples[torch], batch_size=4))
    assert_matches_torch(ours, theirs)


def test_loader_without_batching_converts_samples_like_torch():
    samples = [(np.array([1.0, 2.0]), 3, "s"), (np.array([4.0, 5.0]), 6, "t")]
    ours = data.DataLoader(samples, batch_size=None)
    theirs = tdata.DataLoader(samples, batch_size=None)
    assert len(ours) == len(theirs) == 2
    assert_matches_torch(list(ours), list(theirs))


def test_loader_with_a_custom_sampler_batch_sampler_and_collate_fn():
    order = [4, 0, 3, 1, 2]
    assert_matches_torch(list(data.DataLoader(Squares(5), batch_size=2, sampler=order)),
                         list(tdata.DataLoader(Squares(5), batch_size=2, sampler=order)))
    batches = [[4, 0], [3], [1, 2]]
    assert_matches_torch(list(data.DataLoader(Squares(5), batch_sampler=batches)),
                         list(tdata.DataLoader(Squares(5), batch_sampler=batches)))
    assert len(data.DataLoader(Squares(5), batch_sampler=batches)) == 3
    assert list(data.DataLoader(Squares(5), batch_size=2, collate_fn=len)) == [2, 2, 1]


def test_loader_uses_a_datasets_getitems_for_whole_batches():
    class Batched(data.Dataset):
        def __getitems__(self, indices):
            return [i * 10 for i in indices]

        def __len__(self):
            return 5

    assert [b.tolist() for b in data.DataLoader(Batched(), batch_size=2)] == [[0, 10], [20, 30], [40]]


@pytest.mark.parametrize("n, batch_size, drop_last", [(10, 3, False), (10, 3, True), (4, 2, True), (4, None, False)])
def test_loader_over_an_iterable_dataset_matches_torch(n, batch_size, drop_last):
    ours = data.DataLoader(make_stream(data, n), batch_size=batch_size, drop_last=drop_last)
    theirs = tdata.DataLoader(make_stream(tdata, n), batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    assert_matches_torch(list(ours), list(theirs))


def test_loader_iterable_dataset_without_len():
    class Stream(data.IterableDataset):
        def __iter__(self):
            yield from ({"v": i} for i in range(5))

    batches = list(data.DataLoader(Stream(), batch_size=2))
    assert [b["v"].tolist() for b in batches] == [[0, 1], [2, 3], [4]]


def torch_and_ours_loader_kwargs():
    """(kwargs builder, dataset kind) pairs that DataLoader must reject; builders get the data module."""
    return [
        (lambda d: dict(shuffle=True, sampler=d.SequentialSampler(range(4))), "map"),
        (lambda d: dict(batch_sampler=[[0, 1]], batch_size=2), "map"),
        (lambda d: dict(batch_sampler=[[0, 1]], shuffle=True), "map"),
        (lambda d: dict(batch_sampler=[[0, 1]], sampler=[0, 1]), "map"),
        (lambda d: dict(batch_sampler=[[0, 1]], drop_last=True), "map"),
        (lambda d: dict(batch_size=None, drop_last=True), "map"),
        (lambda d: dict(num_workers=-1), "map"),
        (lambda d: dict(timeout=-1), "map"),
        (lambda d: dict(prefetch_factor=2), "map"),
        (lambda d: dict(persistent_workers=True), "map"),
        (lambda d: dict(multiprocessing_context="spawn"), "map"),
        (lambda d: dict(batch_size=0), "map"),
        (lambda d: dict(shuffle=True), "iterable"),
        (lambda d: dict(sampler=[0, 1]), "iterable"),
        (lambda d: dict(batch_sampler=[[0, 1]]), "iterable"),
    ]


@pytest.mark.parametrize("make_kwargs, kind", torch_and_ours_loader_kwargs())
def test_loader_argument_errors_match_torch(make_kwargs, kind):
    def build(d):
        dataset = make_stream(d, 4) if kind == "iterable" else Squares(4)
        return lambda: d.DataLoader(dataset, **make_kwargs(d))

    # Messages naming a sampler object embed its repr, which differs between the libraries.
    assert_raises_like_torch(build(data), build(tdata), same_message=(kind == "map"))


def test_loader_rejects_changing_batching_attributes_after_construction():
    for lib in (data, tdata):
        loader = lib.DataLoader(Squares(4))
        with pytest.raises(ValueError, match="batch_size attribute should not be set"):
            loader.batch_size = 2
    loader.num_workers = 0  # not one of the guarded attributes


def test_loader_with_a_timeout_and_no_workers_fails_on_iteration_like_torch():
    assert_raises_like_torch(lambda: iter(data.DataLoader(Squares(4), timeout=1)),
                             lambda: iter(tdata.DataLoader(Squares(4), timeout=1)))


def test_loader_pin_memory_warns_and_still_loads():
    with pytest.warns(UserWarning, match="pin_memory"):
        batches = list(data.DataLoader(Squares(3), batch_size=2, pin_memory=True))
    assert [b[0].tolist() for b in batches] == [[0, 1], [2]]


def shuffled_epochs(seed, epochs=3, n=20, batch_size=6):
    loader = data.DataLoader(range(n), batch_size=batch_size, shuffle=True, generator=tp.Generator().manual_seed(seed))
    return [flatten(loader) for _ in range(epochs)]


def test_shuffle_gives_a_permutation_every_epoch_and_reshuffles():
    epochs = shuffled_epochs(0)
    for order in epochs:
        assert sorted(order) == list(range(20))
    assert epochs[0] != list(range(20))
    assert epochs[0] != epochs[1]


def test_shuffle_is_reproducible_from_a_seeded_generator():
    assert shuffled_epochs(7) == shuffled_epochs(7)
    assert shuffled_epochs(7) != shuffled_epochs(8)


def test_shuffle_without_a_generator_follows_the_global_seed():
    def epoch():
        return flatten(data.DataLoader(range(20), batch_size=4, shuffle=True))

    tp.manual_seed(11)
    first = epoch()
    tp.manual_seed(11)
    assert epoch() == first
    assert sorted(first) == list(range(20))


def test_shuffle_with_drop_last_drops_the_short_batch():
    loader = data.DataLoader(range(10), batch_size=4, shuffle=True, drop_last=True)
    batches = list(loader)
    assert len(loader) == len(batches) == 2
    assert all(len(b) == 4 for b in batches)
    assert len(set(flatten(batches))) == 8


def test_worker_info_is_none_in_the_main_process():
    assert data.get_worker_info() is None


def test_public_names_exist():
    for name in ("Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset",
                 "Subset", "random_split", "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
                 "WeightedRandomSampler", "BatchSampler", "DataLoader", "default_collate", "default_convert",
                 "get_worker_info"):
        assert hasattr(data, name), name
    assert tp.utils.data is data
