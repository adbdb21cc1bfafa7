"""tensorplay.utils.model_zoo, as torch.utils.model_zoo: load_url is tensorplay.hub.load_state_dict_from_url."""

from tensorplay.hub import load_state_dict_from_url as load_url

__all__ = ["load_url"]
