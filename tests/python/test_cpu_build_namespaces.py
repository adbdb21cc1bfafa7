"""The namespaces around the core (tensorplay.cuda, accelerator, mps, xpu, backends, nn.parallel)
answer as PyTorch's CPU wheel answers on a machine without a GPU: each expression below is evaluated
with T bound to torch and to tensorplay, and both must give the same value, or raise the same
exception with the same message, with the same warnings (call_outcomes.py says how they compare).

The flags of tensorplay.backends, whose answers depend on what was set before, are compared in
test_backends_flags.py."""

import importlib
import sys

import pytest
import torch

import tensorplay
from call_outcomes import outcome

# torch.mps.Event's __del__ fails on the instance its __init__ could not finish (a PyTorch bug).
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")

CUDA = [
    'T.cuda.is_available()',
    'T.cuda.device_count()',
    'T.cuda.is_bf16_supported()',
    'T.cuda.is_bf16_supported(False)',
    'T.cuda.is_bf16_supported(including_emulation=False)',
    'T.cuda.is_tf32_supported()',
    'T.cuda.get_arch_list()',
    'T.cuda.get_gencode_flags()',
    'T.cuda.is_initialized()',
    'T.cuda.init()',
    'T.cuda.cudart()',
    'T.cuda.has_half',
    'T.cuda.has_magma',
    'T.cuda.default_generators',
    'T.cuda.cudaStatus.SUCCESS',
    'T.cuda.cudaStatus.ERROR_NOT_READY',
    'T.cuda.check_error(0)',
    'T.cuda.CudaError(1)',
    'issubclass(T.cuda.CudaError, RuntimeError)',
    'issubclass(T.cuda.OutOfMemoryError, RuntimeError)',
    'issubclass(T.cuda.DeferredCudaCallError, Exception)',
    'T.cuda.current_device()',
    'T.cuda.synchronize()',
    'T.cuda.synchronize(0)',
    "T.cuda.synchronize('cpu')",
    'T.cuda.ipc_collect()',
    'T.cuda.get_device_name()',
    'T.cuda.get_device_name(0)',
    'T.cuda.get_device_name(-1)',
    'T.cuda.get_device_capability()',
    'T.cuda.get_device_capability(0)',
    'T.cuda.get_device_properties()',
    'T.cuda.get_device_properties(0)',
    'T.cuda.can_device_access_peer(0, 1)',
    'T.cuda.current_blas_handle()',
    'T.cuda.current_solver_handle()',
    "T.cuda.set_sync_debug_mode('warn')",
    'T.cuda.set_sync_debug_mode(0)',
    'T.cuda.get_sync_debug_mode()',
    'T.cuda.set_device(-1)',
    'T.cuda.set_device(0)',
    'T.cuda.set_device(1)',
    "T.cuda.set_device('cuda:0')",
    "T.cuda.set_device('cuda')",
    "T.cuda.set_device(T.device('cuda', 0))",
    "T.cuda.set_device(T.device('cuda'))",
    "T.cuda.set_device('cpu')",
    'T.cuda.set_device(None)',
    'T.cuda.device(-1).idx',
    'T.cuda.device(0).idx',
    "T.cuda.device('cuda:1').idx",
    "T.cuda.device(T.device('cuda', 2)).idx",
    "T.cuda.device('cuda').idx",
    'T.cuda.device(None).idx',
    "T.cuda.device('cpu')",
    'enter(T.cuda.device(-1))',
    'enter(T.cuda.device(0))',
    "enter(T.cuda.device('cuda:0'))",
    'enter(T.cuda.device(None))',
    'T.cuda.device_of(T.zeros(1)).idx',
    'enter(T.cuda.device_of(T.zeros(1)))',
    'T.cuda.stream(None)',
    'enter(T.cuda.stream(None))',
    'enter(T.cuda.StreamContext(None))',
    'T.cuda.StreamContext(None).idx',
    'T.cuda.set_stream(None)',
    'T.cuda.set_stream(0)',
    'T.cuda.current_stream()',
    'T.cuda.current_stream(0)',
    'T.cuda.default_stream()',
    'T.cuda.get_stream_from_external(0)',
    'T.cuda.Stream()',
    'T.cuda.Stream(0)',
    'T.cuda.Stream(priority=-1)',
    'T.cuda.ExternalStream(0)',
    'T.cuda.ExternalStream(0, device=-1)',
    'T.cuda.Event()',
    'T.cuda.Event(enable_timing=True)',
    'T.cuda.streams.Event()',
    'T.cuda.device_memory_used()',
    'T.cuda.memory_usage()',
    'T.cuda.utilization()',
    'T.cuda.temperature()',
    'T.cuda.power_draw()',
    'T.cuda.clock_rate()',
    'T.cuda.manual_seed(0)',
    'T.cuda.manual_seed(1.5)',
    "T.cuda.manual_seed('a')",
    'T.cuda.manual_seed(None)',
    'T.cuda.manual_seed_all(42)',
    "T.cuda.manual_seed_all('x')",
    'T.cuda.seed()',
    'T.cuda.seed_all()',
    'T.cuda.initial_seed()',
    'T.cuda.get_rng_state()',
    'T.cuda.get_rng_state(0)',
    "T.cuda.get_rng_state('cpu')",
    'T.cuda.get_rng_state_all()',
    'T.cuda.set_rng_state(T.zeros(5, dtype=T.uint8))',
    "T.cuda.set_rng_state(T.zeros(5, dtype=T.uint8), 'cuda:1')",
    'T.cuda.set_rng_state(T.zeros(5, dtype=T.uint8), 3)',
    'T.cuda.set_rng_state(0)',
    'T.cuda.set_rng_state_all([])',
    'T.cuda.set_rng_state_all([T.zeros(5, dtype=T.uint8)])',
    'T.cuda.set_rng_state_all(0)',
    'T.cuda.random.manual_seed(3)',
    'T.cuda.empty_cache()',
    'T.cuda.memory_allocated()',
    'T.cuda.memory_allocated(0)',
    "T.cuda.memory_allocated('cuda:0')",
    "T.cuda.memory_allocated(T.device('cuda'))",
    'T.cuda.max_memory_allocated()',
    'T.cuda.memory_reserved()',
    'T.cuda.max_memory_reserved()',
    'T.cuda.memory_cached()',
    'T.cuda.max_memory_cached()',
    'T.cuda.memory_stats()',
    'T.cuda.memory_stats(0)',
    'T.cuda.memory_stats_as_nested_dict()',
    'T.cuda.host_memory_stats()',
    'T.cuda.host_memory_stats_as_nested_dict()',
    'T.cuda.reset_peak_memory_stats()',
    "T.cuda.reset_peak_memory_stats('cpu')",
    'T.cuda.reset_accumulated_memory_stats()',
    'T.cuda.reset_max_memory_allocated()',
    'T.cuda.reset_max_memory_cached()',
    "T.cuda.reset_max_memory_allocated('cpu')",
    'T.cuda.reset_accumulated_host_memory_stats()',
    'T.cuda.reset_peak_host_memory_stats()',
    'T.cuda.memory_snapshot()',
    'T.cuda.memory_summary()',
    'T.cuda.memory_summary(abbreviated=True)',
    "T.cuda.memory_summary('cpu')",
    'T.cuda.list_gpu_processes()',
    'T.cuda.mem_get_info()',
    'T.cuda.mem_get_info(0)',
    "T.cuda.mem_get_info('cpu')",
    'T.cuda.caching_allocator_enable()',
    'T.cuda.caching_allocator_enable(False)',
    'enter(T.cuda.caching_allocator_disabled())',
    'T.cuda.caching_allocator_alloc(16)',
    'T.cuda.caching_allocator_alloc(16, 0)',
    'T.cuda.caching_allocator_alloc(16, -1, 0)',
    'T.cuda.caching_allocator_alloc(16, 0, 0)',
    "T.cuda.caching_allocator_alloc(16, -1, 'x')",
    'T.cuda.caching_allocator_delete(0)',
    'T.cuda.set_per_process_memory_fraction(0.5)',
    'T.cuda.get_per_process_memory_fraction()',
    'T.cuda.get_allocator_backend()',
    "T.cuda.CUDAPluggableAllocator('/nonexistent.so', 'a', 'b')",
    'T.cuda.change_current_allocator(None)',
    'T.cuda.MemPool()',
    'enter(T.cuda.use_mem_pool(None))',
    'enter(T.cuda.use_mem_pool(None, -1))',
    'T.cuda.is_current_stream_capturing()',
    'T.cuda.graph_pool_handle()',
    'T.cuda.CUDAGraph()',
    'T.cuda.graph(None)',
    'T.cuda.make_graphed_callables(T.nn.Linear(2, 2), (T.zeros(1, 2),))',
    'T.cuda.GreenContext.create(num_sms=1)',
    'T.cuda.GreenContext.max_workqueue_concurrency()',
    'T.cuda.GreenContext()',
    "T.cuda.nvtx.range_push('a')",
    'T.cuda.nvtx.range_pop()',
    "T.cuda.nvtx.mark('a')",
    "enter(T.cuda.nvtx.range('a'))",
    'T.cuda.FloatTensor()',
    'T.cuda.LongTensor([1, 2])',
    'T.cuda.BoolTensor(2)',
    'T.cuda.FloatTensor.dtype',
    'T.cuda.HalfTensor.dtype',
    'T.cuda.BFloat16Tensor.is_cuda',
    'isinstance(T.zeros(1), T.cuda.FloatTensor)',
    'isinstance(T.zeros(1), T.FloatTensor)',
]

ACCELERATOR = [
    'T.accelerator.is_available()',
    'T.accelerator.current_accelerator()',
    'T.accelerator.current_accelerator(True)',
    'T.accelerator.current_accelerator(check_available=True)',
    'T.accelerator.device_count()',
    'T.accelerator.current_device_index()',
    'T.accelerator.current_device_idx()',
    'T.accelerator.set_device_index(0)',
    'T.accelerator.set_device_index(-1)',
    "T.accelerator.set_device_index('cuda:0')",
    "T.accelerator.set_device_index(T.device('cuda', 0))",
    'T.accelerator.set_device_index(None)',
    'T.accelerator.set_device_idx(0)',
    'T.accelerator.device_index(0).idx',
    'enter(T.accelerator.device_index(0))',
    'enter(T.accelerator.device_index(None))',
    'T.accelerator.get_device_capability()',
    'T.accelerator.get_device_capability(0)',
    'T.accelerator.synchronize()',
    'T.accelerator.synchronize(0)',
    "T.accelerator.synchronize('cuda')",
    "T.accelerator.synchronize('cpu')",
    'T.accelerator.current_stream()',
    'T.accelerator.current_stream(0)',
    'T.accelerator.set_stream(None)',
    'T.accelerator.set_stream(0)',
    'T.accelerator.Graph()',
    'T.accelerator.Graph(keep_graph=True)',
    'T.accelerator.empty_cache()',
    'T.accelerator.empty_host_cache()',
    'T.accelerator.memory_stats()',
    'T.accelerator.memory_stats(0)',
    'T.accelerator.memory_allocated()',
    "T.accelerator.memory_allocated('cuda')",
    'T.accelerator.max_memory_allocated()',
    'T.accelerator.memory_reserved()',
    'T.accelerator.max_memory_reserved()',
    'T.accelerator.reset_accumulated_memory_stats()',
    'T.accelerator.reset_peak_memory_stats()',
    'T.accelerator.get_memory_info()',
    'T.accelerator.get_memory_info(0)',
    "T.accelerator.get_memory_info('cuda:0')",
]

MPS = [
    'T.mps.is_available()',
    'T.mps.device_count()',
    'T.mps.synchronize()',
    'T.mps.get_rng_state()',
    "T.mps.get_rng_state('mps')",
    'T.mps.set_rng_state(T.zeros(3, dtype=T.uint8))',
    'T.mps.set_rng_state(0)',
    'T.mps.manual_seed(0)',
    "T.mps.manual_seed('x')",
    'T.mps.seed()',
    'T.mps.empty_cache()',
    'T.mps.set_per_process_memory_fraction(0.5)',
    'T.mps.set_per_process_memory_fraction(3.0)',
    'T.mps.set_per_process_memory_fraction(1)',
    'T.mps.current_allocated_memory()',
    'T.mps.driver_allocated_memory()',
    'T.mps.recommended_max_memory()',
    "T.mps.compile_shader('kernel void f() {}')",
    "T.mps.load_metallib(b'x')",
    "T.mps.load_metallib('/tmp/x.metallib')",
    'T.mps.load_metallib(1)',
    'T.mps.Event()',
    'T.mps.Event(enable_timing=True)',
]

XPU = [
    'T.xpu.is_available()',
    'T.xpu.device_count()',
    'T.xpu.is_bf16_supported()',
    'T.xpu.is_bf16_supported(False)',
    'T.xpu.is_tf32_supported()',
    'T.xpu.is_initialized()',
    'T.xpu.init()',
    'T.xpu.get_arch_list()',
    'T.xpu.get_gencode_flags()',
    'T.xpu.default_generators',
    'T.xpu.current_device()',
    'T.xpu.synchronize()',
    'T.xpu.synchronize(0)',
    'T.xpu.set_device(0)',
    'T.xpu.set_device(-1)',
    "T.xpu.set_device('cpu')",
    'T.xpu.get_device_name()',
    'T.xpu.get_device_name(0)',
    'T.xpu.get_device_capability()',
    'T.xpu.get_device_properties()',
    'T.xpu.get_device_properties(0)',
    'T.xpu.can_device_access_peer(0, 1)',
    'T.xpu.device(0).idx',
    'T.xpu.device(-1).idx',
    'T.xpu.device(None).idx',
    "T.xpu.device('cpu')",
    "T.xpu.device('cuda:0')",
    'enter(T.xpu.device(-1))',
    'enter(T.xpu.device(0))',
    'enter(T.xpu.device(None))',
    'T.xpu.device_of(T.zeros(1)).idx',
    'enter(T.xpu.device_of(T.zeros(1)))',
    'T.xpu.stream(None)',
    'enter(T.xpu.stream(None))',
    'enter(T.xpu.StreamContext(None))',
    'T.xpu.set_stream(None)',
    'T.xpu.set_stream(0)',
    'T.xpu.current_stream()',
    'T.xpu.get_stream_from_external(0)',
    'T.xpu.Stream()',
    'T.xpu.Event()',
    'T.xpu.manual_seed(0)',
    "T.xpu.manual_seed('x')",
    'T.xpu.manual_seed_all(0)',
    'T.xpu.seed()',
    'T.xpu.seed_all()',
    'T.xpu.initial_seed()',
    'T.xpu.get_rng_state()',
    'T.xpu.get_rng_state_all()',
    'T.xpu.set_rng_state(T.zeros(3, dtype=T.uint8))',
    'T.xpu.set_rng_state(0)',
    'T.xpu.set_rng_state_all([])',
    'T.xpu.set_rng_state_all(0)',
    'T.xpu.empty_cache()',
    'T.xpu.memory_allocated()',
    'T.xpu.memory_allocated(0)',
    'T.xpu.max_memory_allocated()',
    'T.xpu.memory_reserved()',
    'T.xpu.max_memory_reserved()',
    'T.xpu.memory_stats()',
    'T.xpu.memory_stats_as_nested_dict()',
    'T.xpu.memory_snapshot()',
    'T.xpu.reset_peak_memory_stats()',
    'T.xpu.reset_accumulated_memory_stats()',
    'T.xpu.mem_get_info()',
    'T.xpu.get_per_process_memory_fraction()',
    'T.xpu.set_per_process_memory_fraction(0.5)',
    'T.xpu.change_current_allocator(None)',
    "T.xpu.XPUPluggableAllocator('/nonexistent.so', 'a', 'b')",
    'T.xpu.MemPool()',
    'enter(T.xpu.use_mem_pool(None))',
    'T.xpu.XPUGraph()',
    'T.xpu.graph(None)',
    'T.xpu.graph_pool_handle()',
    'T.xpu.is_current_stream_capturing()',
    'T.xpu.make_graphed_callables(T.nn.Linear(2, 2), (T.zeros(1, 2),))',
    'T.xpu.clock_rate()',
    'T.xpu.device_memory_used()',
    'T.xpu.memory_usage()',
    'T.xpu.power_draw()',
    'T.xpu.temperature()',
    'T.xpu.utilization()',
]

BACKENDS = [
    'T.backends.cudnn.enabled',
    'T.backends.cudnn.benchmark',
    'T.backends.cudnn.deterministic',
    'T.backends.cudnn.allow_tf32',
    'T.backends.cudnn.fp32_precision',
    'T.backends.cudnn.benchmark_limit',
    'T.backends.cudnn.depthwise_kernel',
    'T.backends.cudnn.version()',
    'T.backends.cudnn.is_available()',
    'T.backends.cudnn.is_acceptable(T.zeros(1))',
    'T.backends.cudnn.conv.fp32_precision',
    'T.backends.cudnn.rnn.fp32_precision',
    'T.backends.cudnn.conv.foo',
    'T.backends.cudnn.CUDNN_TENSOR_DTYPES == {T.float16, T.float32, T.float64}',
    'T.backends.cudnn.nonexistent',
    "T.backends.cudnn.rnn.get_cudnn_mode('LSTM')",
    "T.backends.cudnn.rnn.get_cudnn_mode('x')",
    'T.backends.cudnn.rnn.Unserializable(3).get()',
    'enter(T.backends.cudnn.flags())',
    'T.backends.mps.is_available()',
    'T.backends.mps.is_built()',
    'T.backends.mps.get_name()',
    'T.backends.mps.get_core_count()',
    'T.backends.mps.is_macos13_or_newer()',
    'T.backends.mps.is_macos_or_newer(14, 0)',
    'T.backends.mkldnn.is_available()',
    'T.backends.mkldnn.is_acl_available()',
    'T.backends.mkldnn.enabled',
    'T.backends.mkldnn.deterministic',
    'T.backends.mkldnn.allow_tf32',
    'T.backends.mkldnn.fp32_precision',
    'T.backends.mkldnn.matmul.fp32_precision',
    'T.backends.mkldnn.conv.fp32_precision',
    'T.backends.mkldnn.rnn.fp32_precision',
    'T.backends.mkldnn.VERBOSE_OFF',
    'T.backends.mkldnn.VERBOSE_ON',
    'T.backends.mkldnn.VERBOSE_ON_CREATION',
    'enter(T.backends.mkldnn.verbose(0))',
    'enter(T.backends.mkl.verbose(0))',
    'T.backends.mkl.VERBOSE_ON',
    'T.backends.openmp.is_available()',
    'T.backends.kleidiai.is_available()',
    'T.backends.cusparselt.is_available()',
    'T.backends.cusparselt.version()',
    'T.backends.cusparselt.get_max_alg_id()',
    'T.backends.opt_einsum.is_available()',
    'T.backends.opt_einsum.enabled',
    'T.backends.opt_einsum.strategy',
    'T.backends.opt_einsum.get_opt_einsum()',
    'T.backends.opt_einsum.set_flags()',
    'T.backends.opt_einsum.set_flags(True)',
    "T.backends.opt_einsum.set_flags(None, 'greedy')",
    'enter(T.backends.opt_einsum.flags())',
    'enter(T.backends.opt_einsum.flags(enabled=True))',
    'T.backends.nnpack.set_flags(1)',
    'T.backends.mha.get_fastpath_enabled()',
    'T.backends.cuda.is_built()',
    'T.backends.cuda.matmul.allow_tf32',
    'T.backends.cuda.matmul.allow_bf16_reduced_precision_reduction',
    'T.backends.cuda.matmul.allow_fp16_reduced_precision_reduction',
    'T.backends.cuda.matmul.allow_fp16_reduced_precision_reduction_split_k',
    'T.backends.cuda.matmul.allow_bf16_reduced_precision_reduction_split_k',
    'T.backends.cuda.matmul.allow_fp16_accumulation',
    'T.backends.cuda.matmul.fp32_precision',
    'T.backends.cuda.matmul.foo',
    'T.backends.cuda.preferred_linalg_library()',
    "T.backends.cuda.preferred_linalg_library('default')",
    "T.backends.cuda.preferred_linalg_library('x')",
    'T.backends.cuda.preferred_linalg_library(1)',
    'str(T.backends.cuda.preferred_linalg_library())',
    'repr(T.backends.cuda.preferred_linalg_library())',
    'T.backends.cuda.preferred_blas_library()',
    "T.backends.cuda.preferred_blas_library('cublaslt')",
    "repr(T.backends.cuda.preferred_blas_library('default'))",
    "T.backends.cuda.preferred_blas_library('x')",
    'repr(T.backends.cuda.preferred_rocm_fa_library())',
    "T.backends.cuda.preferred_rocm_fa_library('x')",
    'T.backends.cuda.preferred_rocm_fa_library(3)',
    'T.backends.cuda.flash_sdp_enabled()',
    'T.backends.cuda.mem_efficient_sdp_enabled()',
    'T.backends.cuda.math_sdp_enabled()',
    'T.backends.cuda.cudnn_sdp_enabled()',
    'T.backends.cuda.fp16_bf16_reduction_math_sdp_allowed()',
    'T.backends.cuda.is_flash_attention_available()',
    'T.backends.cuda.is_ck_sdpa_available()',
    'T.backends.cuda.enable_flash_sdp(1)',
    'T.backends.cuda.enable_mem_efficient_sdp(1)',
    "T.backends.cuda.enable_math_sdp('x')",
    'T.backends.cuda.enable_cudnn_sdp(1)',
    'T.backends.cuda.allow_fp16_bf16_reduction_math_sdp(1)',
    'enter(T.backends.cuda.sdp_kernel())',
    'T.backends.cuda.cufft_plan_cache.size',
    'T.backends.cuda.cufft_plan_cache.max_size',
    'T.backends.cuda.cufft_plan_cache[0]',
    "T.backends.cuda.cufft_plan_cache['cuda:1']",
    'T.backends.cuda.cuFFTPlanCache(0).size',
    'T.backends.cuda.cuFFTPlanCache(0).clear()',
    'T.backends.cuda.cublas_workspace_size()',
    'T.backends.cuda.cublas_workspace_size(4)',
    'T.backends.cuda.cublaslt_workspace_size()',
    'T.backends.cuda.blas_workspace_size()',
    "T.backends.cuda.blas_workspace_size(backend='ck')",
    "T.backends.cuda.blas_workspace_size(backend='cublaslt')",
    "T.backends.cuda.blas_workspace_size(backend='x')",
    'T.backends.cuda.blas_workspace_size(backend=1)',
    'T.backends.cuda.can_use_flash_attention(None)',
    'T.backends.cuda.can_use_flash_attention(sdpa_params(T))',
    'T.backends.cuda.can_use_efficient_attention(sdpa_params(T))',
    'T.backends.cuda.can_use_cudnn_attention(sdpa_params(T), True)',
    "T.backends.cpu.get_cpu_capability() in ('DEFAULT', 'AVX2', 'AVX512')",
    'T.backends.fp32_precision',
    'T.backends.flags_frozen()',
    'enter(T.backends.flags())',
    'T.backends.set_flags(None)',
]

PARALLEL = [
    'T.nn.DataParallel(T.nn.Linear(2, 3)).device_ids',
    "hasattr(T.nn.DataParallel(T.nn.Linear(2, 3)), 'output_device')",
    "hasattr(T.nn.DataParallel(T.nn.Linear(2, 3)), 'dim')",
    'list(T.nn.DataParallel(T.nn.Linear(2, 3)).state_dict())',
    'T.nn.DataParallel(T.nn.Linear(2, 3), device_ids=[0], output_device=0, dim=1).device_ids',
    'repr(T.nn.DataParallel(T.nn.Linear(2, 3)))',
    'T.nn.parallel.DataParallel is T.nn.DataParallel',
    'T.nn.DataParallel(T.nn.Linear(2, 3))(T.zeros(4, 2)).shape',
    'T.nn.parallel.data_parallel(T.nn.Linear(2, 3), T.zeros(4, 2))',
    'T.nn.parallel.replicate(T.nn.Linear(2, 3), [])',
    'T.nn.parallel.replicate(T.nn.Linear(2, 3), [0])',
    'T.nn.parallel.scatter(T.zeros(4, 2), [0])',
    "T.nn.parallel.scatter((1, [2, 3], {'a': 4}), [0, 1])",
    'T.nn.parallel.scatter((), [0, 1])',
    'T.nn.parallel.gather([T.zeros(1), T.zeros(1)], 0)',
    "T.nn.parallel.gather([(1, None, {'a': [5]}), (2, None, {'a': [6]})], 0)",
    'T.nn.parallel.gather([[None], [None]], 0)',
    "T.nn.parallel.gather([{'a': None}, {}], 0)",
    'T.nn.parallel.parallel_apply([T.nn.Linear(2, 3)], [T.zeros(1, 2)])',
    'T.nn.parallel.parallel_apply([T.nn.Linear(2, 3)], [])',
    'T.nn.parallel.parallel_apply([], [])',
    'T.nn.parallel.parallel_apply([T.nn.Linear(2, 3)], [T.zeros(1, 2)], [{}, {}])',
    'T.nn.parallel.parallel_apply([T.nn.Linear(2, 3)], [T.zeros(1, 2)], None, [0, 1])',
]


def sdpa_params(T):
    q = T.zeros(1, 1, 2, 4)
    return T.backends.cuda.SDPAParams(q, q, q, None, 0.0, False, False)


@pytest.mark.parametrize("expression", [*CUDA, *ACCELERATOR, *MPS, *XPU, *BACKENDS, *PARALLEL])
def test_answers_as_torch(expression):
    names = {"sdpa_params": sdpa_params}
    assert outcome(tensorplay, expression, names) == outcome(torch, expression, names)


def test_outcomes_tell_answers_apart():
    """The comparison above sees a different value, exception type, message or warning."""
    assert outcome(tensorplay, "T.cuda.device_count()") != outcome(tensorplay, "T.cuda.is_available()")
    assert outcome(tensorplay, "T.cuda.synchronize()") != outcome(tensorplay, "T.accelerator.synchronize()")
    assert outcome(tensorplay, "T.cuda.memory_cached()") != outcome(tensorplay, "T.cuda.memory_reserved()")
    assert outcome(tensorplay, "T.cuda.set_device('cpu')") != outcome(tensorplay, "T.cuda.set_device(None)")
    assert outcome(tensorplay, "T.cuda.init()") != outcome(tensorplay, "T.xpu.init()")


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
@pytest.mark.parametrize("name", ["FloatStorage", "LongStorage", "ComplexDoubleStorage"])
def test_cuda_storages_cannot_be_made(name):
    """Constructing one warns that TypedStorage is deprecated, once per process, then raises."""
    for root in (torch, tensorplay):
        with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled$"):
            getattr(root.cuda, name)()
    assert tensorplay.cuda.FloatStorage.dtype == tensorplay.float32
    assert tensorplay.cuda.ComplexDoubleStorage.dtype == tensorplay.complex128


@pytest.mark.parametrize("name", ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
                                  "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"])
def test_cuda_tensor_types(name):
    ours, theirs = getattr(tensorplay.cuda, name), getattr(torch.cuda, name)
    assert str(ours.dtype).replace("tensorplay", "torch") == str(theirs.dtype)
    assert ours.is_cuda and theirs.is_cuda
    assert repr(ours) == repr(theirs).replace("torch", "tensorplay")
    cpu_tensor = tensorplay.zeros(1, dtype=ours.dtype)
    assert not isinstance(cpu_tensor, ours) and isinstance(cpu_tensor, getattr(tensorplay, name))


def test_what_a_training_script_touches_runs():
    """The calls a script makes whether or not a GPU is there (guarded ones aside) go through."""
    cuda = tensorplay.cuda
    cuda.manual_seed(0)
    cuda.manual_seed_all(0)
    cuda.empty_cache()
    assert not cuda.is_available() and cuda.device_count() == 0
    device = tensorplay.device("cuda" if cuda.is_available() else "cpu")
    assert device.type == "cpu"
    assert cuda.memory_allocated() == cuda.max_memory_allocated() == 0
    with pytest.warns(FutureWarning, match="is deprecated"):
        scaler = cuda.amp.GradScaler(enabled=False)
    assert not scaler.is_enabled()
    with pytest.warns(FutureWarning, match="is deprecated"):
        autocast = cuda.amp.autocast(enabled=False)
    with autocast:
        assert tensorplay.ones(2, 2).matmul(tensorplay.ones(2, 2)).dtype == tensorplay.float32
    tensorplay.backends.cudnn.benchmark = True
    tensorplay.backends.cudnn.benchmark = False
    assert (tensorplay.accelerator.current_accelerator() or tensorplay.device("cpu")).type == "cpu"


SUBMODULES = ["cuda", "cuda.amp", "cuda.graphs", "cuda.memory", "cuda.nvtx", "cuda.random", "cuda.streams",
              "accelerator", "mps", "xpu", "backends", "backends.cpu", "backends.cuda", "backends.cudnn",
              "backends.cudnn.rnn", "backends.mkl", "backends.mkldnn", "backends.mps", "backends.openmp",
              "backends.opt_einsum", "backends.mha", "backends.nnpack", "compiler", "jit", "hub", "nn.parallel"]


@pytest.mark.parametrize("path", SUBMODULES)
def test_submodules_come_with_import(path):
    """`import tensorplay` makes these attributes, as `import torch` makes torch's."""
    obj = tensorplay
    for part in path.split("."):
        obj = getattr(obj, part)
    assert obj is sys.modules[f"tensorplay.{path}"]


@pytest.mark.parametrize("name", ["_dynamo", "onnx"])
def test_lazy_submodules(name):
    """Imported on first use, as torch imports them."""
    assert getattr(tensorplay, name) is importlib.import_module(f"tensorplay.{name}")
    with pytest.raises(AttributeError, match="^module 'tensorplay' has no attribute 'no_such_module'$"):
        tensorplay.no_such_module  # noqa: B018


def test_data_parallel_runs_the_module():
    """Forward and backward are the wrapped module's own; parameters are reached as module.<name>."""
    from tensorplay.nn.parallel import DataParallel

    tensorplay.manual_seed(0)
    linear = tensorplay.nn.Linear(2, 3)
    model = DataParallel(linear, device_ids=[0], output_device=0, dim=1)
    x = tensorplay.randn(4, 2)
    assert tensorplay.equal(model(x), linear(x))
    model(x).sum().backward()
    assert linear.weight.grad is not None and tensorplay.equal(linear.weight.grad, x.sum(0).expand(3, 2))
    assert [name for name, _ in model.named_parameters()] == ["module.weight", "module.bias"]
    copy = tensorplay.nn.Linear(2, 3)
    DataParallel(copy).load_state_dict(model.state_dict())
    assert tensorplay.equal(copy.weight, linear.weight)
