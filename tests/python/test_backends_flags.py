"""tensorplay.backends' flags answer as torch.backends' do after the same sequence of changes: each
statement below runs in turn, in a fresh process per library, and after each one every flag is read
back; the statement's outcome and all the readings must match PyTorch's (values, exception types and
messages, warnings). The sequences cover PyTorch's rules for fp32_precision, allow_tf32 and
set_float32_matmul_precision, which read each other (backends/_fp32_precision.py), the flags()
context managers, and disable_global_flags()."""

import json
import subprocess
import sys

import pytest

DRIVER = r'''
import importlib, json, sys, warnings
root = importlib.import_module(sys.argv[1])
B = root.backends
READS = {
    "generic": lambda: B.fp32_precision, "cudnn": lambda: B.cudnn.fp32_precision,
    "cudnn.conv": lambda: B.cudnn.conv.fp32_precision, "cudnn.rnn": lambda: B.cudnn.rnn.fp32_precision,
    "matmul": lambda: B.cuda.matmul.fp32_precision, "mkldnn": lambda: B.mkldnn.fp32_precision,
    "mkldnn.matmul": lambda: B.mkldnn.matmul.fp32_precision, "mkldnn.conv": lambda: B.mkldnn.conv.fp32_precision,
    "mkldnn.rnn": lambda: B.mkldnn.rnn.fp32_precision, "cudnn.allow_tf32": lambda: B.cudnn.allow_tf32,
    "matmul.allow_tf32": lambda: B.cuda.matmul.allow_tf32, "matmul_precision": root.get_float32_matmul_precision,
    "cudnn.enabled": lambda: B.cudnn.enabled, "cudnn.benchmark": lambda: B.cudnn.benchmark,
    "cudnn.deterministic": lambda: B.cudnn.deterministic, "cudnn.depthwise_kernel": lambda: B.cudnn.depthwise_kernel,
    "mkldnn.enabled": lambda: B.mkldnn.enabled, "mkldnn.deterministic": lambda: B.mkldnn.deterministic,
    "mkldnn.allow_tf32": lambda: B.mkldnn.allow_tf32,
    "fp16_reduction": lambda: B.cuda.matmul.allow_fp16_reduced_precision_reduction,
    "fp16_splitk": lambda: B.cuda.matmul.allow_fp16_reduced_precision_reduction_split_k,
    "bf16_reduction": lambda: B.cuda.matmul.allow_bf16_reduced_precision_reduction,
    "bf16_splitk": lambda: B.cuda.matmul.allow_bf16_reduced_precision_reduction_split_k,
    "fp16_accumulation": lambda: B.cuda.matmul.allow_fp16_accumulation, "flash": B.cuda.flash_sdp_enabled,
    "math": B.cuda.math_sdp_enabled, "mem_efficient": B.cuda.mem_efficient_sdp_enabled,
    "cudnn_sdp": B.cuda.cudnn_sdp_enabled, "fp16_bf16_math": B.cuda.fp16_bf16_reduction_math_sdp_allowed,
    "linalg": lambda: str(B.cuda.preferred_linalg_library()), "blas": lambda: str(B.cuda.preferred_blas_library()),
    "mha": B.mha.get_fastpath_enabled, "frozen": B.flags_frozen,
}
def clean(text):
    return text.replace("tensorplay", "torch").split(" (Triggered internally at")[0]
def attempt(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn()
            plain = isinstance(result, (bool, int, str, type(None)))
            result = [type(result).__name__, result if plain else repr(result)]
        except Exception as error:
            result = [type(error).__name__, clean(str(error))]
    return [result, [[w.category.__name__, clean(str(w.message))] for w in caught]]
steps = []
for statement in json.loads(sys.stdin.read()):
    steps.append([statement, attempt(lambda: exec(statement, {"B": B, "T": root})),
                  {name: attempt(read) for name, read in READS.items()}])
print(json.dumps(steps))
'''


def run(root, statements):
    done = subprocess.run([sys.executable, "-c", DRIVER, root], input=json.dumps(statements), capture_output=True,
                          text=True, timeout=300, check=True)
    return json.loads(done.stdout.splitlines()[-1])


FLAG_CHANGES = [
    'B.cudnn.benchmark = True',
    'B.cudnn.benchmark = 1',
    'B.cudnn.deterministic = True',
    'B.cudnn.enabled = False',
    "B.cudnn.enabled = 'x'",
    "B.cudnn.depthwise_kernel = 'cudnn'",
    "B.cudnn.depthwise_kernel = 'x'",
    'B.cudnn.depthwise_kernel = 3',
    'B.cudnn.allow_tf32 = False',
    'B.cudnn.allow_tf32 = 1',
    'B.cudnn.allow_tf32 = True',
    'B.cuda.matmul.allow_tf32 = True',
    "B.cuda.matmul.allow_tf32 = 'x'",
    'B.cuda.matmul.allow_tf32 = False',
    "T.set_float32_matmul_precision('high')",
    "T.set_float32_matmul_precision('medium')",
    "T.set_float32_matmul_precision('HIGH')",
    "T.set_float32_matmul_precision('highest')",
    "B.cuda.matmul.fp32_precision = 'tf32'",
    "B.cuda.matmul.fp32_precision = 'bf16'",
    "B.cuda.matmul.fp32_precision = 'x'",
    'B.cuda.matmul.fp32_precision = 1',
    "B.cuda.matmul.fp32_precision = 'ieee'",
    "B.cudnn.fp32_precision = 'ieee'",
    "B.cudnn.fp32_precision = 'none'",
    "B.cudnn.conv.fp32_precision = 'ieee'",
    "B.cudnn.conv.fp32_precision = 'tf32'",
    "B.cudnn.rnn.fp32_precision = 'none'",
    "B.cudnn.rnn.fp32_precision = 'tf32'",
    "B.fp32_precision = 'bf16'",
    "B.fp32_precision = 'tf32'",
    "B.fp32_precision = 'ieee'",
    "B.fp32_precision = 'none'",
    "B.mkldnn.fp32_precision = 'tf32'",
    "B.mkldnn.fp32_precision = 'none'",
    "B.mkldnn.matmul.fp32_precision = 'bf16'",
    "B.mkldnn.matmul.fp32_precision = 'none'",
    "B.mkldnn.conv.fp32_precision = 'tf32'",
    "B.mkldnn.conv.fp32_precision = 'none'",
    'B.mkldnn.conv.foo = 1',
    'B.mkldnn.enabled = False',
    'B.mkldnn.enabled = 2',
    'B.mkldnn.deterministic = True',
    'B.mkldnn.allow_tf32 = True',
    'B.mkldnn.allow_tf32 = 1',
    'B.cuda.matmul.allow_fp16_reduced_precision_reduction = False',
    'B.cuda.matmul.allow_fp16_reduced_precision_reduction = (True, False)',
    'B.cuda.matmul.allow_fp16_reduced_precision_reduction = (False, False)',
    'B.cuda.matmul.allow_fp16_reduced_precision_reduction = [True]',
    'B.cuda.matmul.allow_fp16_reduced_precision_reduction = ()',
    'B.cuda.matmul.allow_fp16_reduced_precision_reduction = (True, 1)',
    'B.cuda.matmul.allow_fp16_reduced_precision_reduction = 1',
    'B.cuda.matmul.allow_fp16_reduced_precision_reduction_split_k = True',
    'B.cuda.matmul.allow_bf16_reduced_precision_reduction = (False,)',
    'B.cuda.matmul.allow_bf16_reduced_precision_reduction = True',
    'B.cuda.matmul.allow_fp16_accumulation = True',
    'B.cuda.matmul.allow_fp16_accumulation = 1',
    'B.cuda.enable_flash_sdp(False)',
    'B.cuda.enable_math_sdp(False)',
    'B.cuda.enable_cudnn_sdp(False)',
    'B.cuda.enable_mem_efficient_sdp(False)',
    'B.cuda.enable_flash_sdp(True); B.cuda.enable_math_sdp(True)',
    'B.cuda.enable_cudnn_sdp(True); B.cuda.enable_mem_efficient_sdp(True)',
    'with B.cuda.sdp_kernel(enable_flash=False, enable_cudnn=False): assert not B.cuda.flash_sdp_enabled()',
    "B.cuda.preferred_linalg_library('cusolver')",
    "B.cuda.preferred_linalg_library('magma')",
    "B.cuda.preferred_linalg_library('default')",
    "B.cuda.preferred_blas_library('ck')",
    "B.cuda.preferred_blas_library('cublas')",
    # A block's flags come back in the ValueError's message, the flags after it in the readings.
    'with B.cudnn.flags(enabled=True, benchmark=True, deterministic=True, allow_tf32=False): '
    'raise ValueError(str((B.cudnn.enabled, B.cudnn.benchmark, B.cudnn.allow_tf32, B.cudnn.conv.fp32_precision)))',
    'with B.cudnn.flags(): '
    'raise ValueError(str((B.cudnn.enabled, B.cudnn.benchmark, B.cudnn.allow_tf32, B.cudnn.fp32_precision)))',
    'B.cudnn.set_flags(True, False)',
    "B.cudnn.set_flags(_fp32_precision='x')",
    'with B.mkldnn.flags(enabled=False, deterministic=True): '
    'raise ValueError(str((B.mkldnn.enabled, B.mkldnn.deterministic)))',
    'B.mkldnn.set_flags()',
    "with B.flags(fp32_precision='ieee'): raise ValueError(B.cudnn.conv.fp32_precision)",
    "B.set_flags('tf32')",
    "B.set_flags('none')",
    'B.disable_global_flags()',
    'B.cudnn.benchmark = False',
    'B.mkldnn.enabled = True',
    "B.fp32_precision = 'none'",
    'B.cuda.matmul.allow_tf32 = False',
    "B.cudnn.rnn.fp32_precision = 'tf32'",
    'with B.cudnn.flags(benchmark=True): raise ValueError(str(B.cudnn.benchmark))',
    'B.cudnn.benchmark_limit = 3',
]

# From a fresh process: the generic and oneDNN settings first, then the legacy APIs on top of them.
NEW_API_FIRST = [
    "B.fp32_precision = 'tf32'",
    "B.fp32_precision = 'bf16'",
    "B.mkldnn.fp32_precision = 'tf32'",
    "B.fp32_precision = 'none'",
    "B.cudnn.fp32_precision = 'ieee'",
    "B.cudnn.allow_tf32 = True",
    "B.cudnn.fp32_precision = 'tf32'",
    "B.cudnn.conv.fp32_precision = 'none'",
    "B.cuda.matmul.fp32_precision = 'tf32'",
    "T.set_float32_matmul_precision('high')",
    "B.mkldnn.matmul.fp32_precision = 'bf16'",
    "T.set_float32_matmul_precision('medium')",
    "B.mkldnn.matmul.fp32_precision = 'none'",
    "B.cudnn.fp32_precision = 'none'",
    "B.mha.set_fastpath_enabled(False)",
    "B.cuda.allow_fp16_bf16_reduction_math_sdp(True)",
    "B.cuda.matmul.allow_bf16_reduced_precision_reduction = [False, True]",
    "B.mkldnn.set_flags(_allow_tf32=True)",
]


@pytest.mark.parametrize("statements", [FLAG_CHANGES, NEW_API_FIRST], ids=["flag_changes", "new_api_first"])
def test_flags_answer_as_torch(statements):
    ours, theirs = run("tensorplay", statements), run("torch", statements)
    assert len(ours) == len(theirs) == len(statements)
    for (statement, our_outcome, our_reads), (_, their_outcome, their_reads) in zip(ours, theirs):
        assert our_outcome == their_outcome, statement
        assert our_reads == their_reads, statement


def test_comparison_sees_a_changed_flag():
    """The readings differ when a statement changed a flag in one library only."""
    (_, _, before), = run("tensorplay", ["pass"])
    (_, _, after), = run("tensorplay", ["B.cudnn.benchmark = True"])
    assert before != after and before["cudnn.benchmark"] != after["cudnn.benchmark"]
