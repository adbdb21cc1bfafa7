"""ChannelShuffle: interleaves the channels of `groups` groups (ShuffleNet)."""

from tensorplay.nn import functional as F
from tensorplay.nn.modules.module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
