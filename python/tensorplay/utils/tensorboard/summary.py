"""The Summary protocol buffers SummaryWriter writes, one function per kind, in tensorboard's own
protos (tensorboard.compat.proto and the plugins' metadata), laid out as PyTorch lays them out so
that TensorBoard shows them the same:

- scalar: a float32 ``simple_value`` (new_style: a float or double tensor for the scalars plugin);
- histogram: a HistogramProto of bucket right edges and counts, empty buckets trimmed at both ends
  but for one empty bucket before the first full one;
- image: a PNG of the HWC image, with its height, width and channel count;
- text: a one-element string tensor for the text plugin, tagged ``<tag>/text_summary``;
- hparams: the hparams plugin's experiment, session start and session end records."""

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.hparams import api_pb2, plugin_data_pb2
from tensorboard.plugins.hparams import metadata as hparams_metadata
from tensorboard.plugins.scalar import metadata as scalar_metadata
from tensorboard.plugins.text import metadata as text_metadata

from tensorplay import _C
from tensorplay.utils.tensorboard._convert import encode_png, to_hwc, to_numpy, to_uint8


def scalar(tag, value, new_style=False, double_precision=False):
    array = to_numpy(value).squeeze()
    if array.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given size: {array.size} and "
                             f"{array.ndim} dimensions.")
    value = float(array)
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=value)])
    tensor = (TensorProto(double_val=[value], dtype="DT_DOUBLE") if double_precision
              else TensorProto(float_val=[value], dtype="DT_FLOAT"))
    metadata = scalar_metadata.create_summary_metadata(display_name="", description="")
    return Summary(value=[Summary.Value(tag=tag, tensor=tensor, metadata=metadata)])


def tensorflow_bins():
    """TensorFlow's default histogram bucket edges: 0 and ±1e-12 * 1.1**k up to 1e20, so that
    buckets are about 10% wide at every magnitude."""
    edges, v = [], 1e-12
    while v < 1e20:
        edges.append(v)
        v *= 1.1
    return [-e for e in reversed(edges)] + [0] + edges


def histogram(tag, values, bins, max_bins=None):
    values = to_numpy(values).astype(float).reshape(-1)  # float64, as PyTorch bins it
    if values.size == 0:
        raise ValueError("The input has no element.")
    counts, edges = np.histogram(values, bins=tensorflow_bins() if isinstance(bins, str) and bins == "tensorflow"
                                 else bins)
    if max_bins is not None and len(counts) > max_bins:
        # Merge runs of `group` neighbouring buckets, the last run padded with empty ones.
        group = len(counts) // max_bins
        counts = np.pad(counts, (0, -len(counts) % group)).reshape(-1, group).sum(axis=1)
        edges = np.concatenate([edges[:-1:group], edges[-1:]])
    full = np.flatnonzero(counts)
    first, last = int(full[0]), int(full[-1])
    # Bucket i is (edges[i], edges[i + 1]]; keep one empty bucket ending where the first full one starts.
    if first > 0:
        bucket, limit = counts[first - 1:last + 1], edges[first:last + 2]
    else:
        bucket, limit = np.concatenate([[0], counts[:last + 1]]), edges[:last + 2]
    return Summary(value=[Summary.Value(tag=tag, histo=HistogramProto(
        min=values.min(), max=values.max(), num=len(values), sum=values.sum(), sum_squares=values.dot(values),
        bucket_limit=limit.tolist(), bucket=bucket.tolist()))])


def image(tag, img, dataformats):
    pixels = to_uint8(to_hwc(to_numpy(img), dataformats))
    height, width, channels = pixels.shape
    return Summary(value=[Summary.Value(tag=tag, image=Summary.Image(
        height=height, width=width, colorspace=channels, encoded_image_string=encode_png(pixels)))])


def text(tag, text_string):
    tensor = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf_8")],
                         tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    metadata = text_metadata.create_summary_metadata(display_name="", description="")
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=metadata, tensor=tensor)])


def _hparams_summary(tag, **plugin_data):
    content = plugin_data_pb2.HParamsPluginData(version=hparams_metadata.PLUGIN_DATA_VERSION, **plugin_data)
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name=hparams_metadata.PLUGIN_NAME, content=content.SerializeToString()))
    return Summary(value=[Summary.Value(tag=tag, metadata=metadata)])


_HPARAM_KINDS = ((  # (Python types, DataType, the struct Value field)
    ((int, float), "DATA_TYPE_FLOAT64", "number_value"), ((str,), "DATA_TYPE_STRING", "string_value"),
    ((bool,), "DATA_TYPE_BOOL", "bool_value")))


def hparams(hparam_dict, metric_dict, hparam_domain_discrete=None):
    """The experiment, session-start and session-end summaries of one run with these hyperparameters
    and metrics. A bool is an int to Python, so it is logged as a number, as PyTorch does."""
    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    hparam_domain_discrete = hparam_domain_discrete or {}
    if not isinstance(hparam_domain_discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in hparam_domain_discrete.items():
        if k not in hparam_dict or not isinstance(v, list) or not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                            f"hparam_dict[{k}].")
    infos, start = [], plugin_data_pb2.SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, _C.Tensor):
            v = to_numpy(v).reshape(-1)[0].item()
        for types, data_type, field in _HPARAM_KINDS:
            if isinstance(v, types):
                setattr(start.hparams[k], field, v)
                domain = (struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d})
                                                       for d in hparam_domain_discrete[k]])
                          if k in hparam_domain_discrete else None)
                infos.append(api_pb2.HParamInfo(name=k, type=api_pb2.DataType.Value(data_type),
                                                domain_discrete=domain))
                break
        else:
            raise ValueError("value should be one of int, float, str, bool, or tensorplay.Tensor")
    experiment = api_pb2.Experiment(hparam_infos=infos,
                                    metric_infos=[api_pb2.MetricInfo(name=api_pb2.MetricName(tag=k))
                                                  for k in metric_dict])
    end = plugin_data_pb2.SessionEndInfo(status=api_pb2.Status.Value("STATUS_SUCCESS"))
    return (_hparams_summary(hparams_metadata.EXPERIMENT_TAG, experiment=experiment),
            _hparams_summary(hparams_metadata.SESSION_START_INFO_TAG, session_start_info=start),
            _hparams_summary(hparams_metadata.SESSION_END_INFO_TAG, session_end_info=end))
