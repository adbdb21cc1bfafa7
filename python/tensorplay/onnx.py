"""tensorplay.onnx: importable, so that programs that mention it run; tensorplay cannot export to ONNX
yet, so ``export`` raises NotImplementedError, and ``is_in_onnx_export()`` is always False."""

__all__ = ["OnnxExporterError", "export", "is_in_onnx_export"]


class OnnxExporterError(RuntimeError):
    """An error while exporting a model to ONNX."""


def is_in_onnx_export():
    """Whether this runs while a model is being exported to ONNX: never."""
    return False


def export(model, args=(), f=None, *, kwargs=None, **options):
    """Exports `model` to ONNX. tensorplay records no graph of a model's ops to translate, so it
    cannot: this raises NotImplementedError."""
    raise NotImplementedError("tensorplay.onnx.export: tensorplay cannot export models to ONNX yet (it records no "
                              "graph of a model's ops); save the weights with tensorplay.save(model.state_dict(), ...)")
