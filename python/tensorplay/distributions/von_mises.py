"""The von Mises distribution."""

import math

import tensorplay
from tensorplay.distributions import constraints
from tensorplay.distributions.distribution import Distribution
from tensorplay.distributions.utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _rejection_sample(loc, concentration, proposal_r, shape):
    """Best and Fisher's rejection sampler (1979) of angles about 0, in float64: each round draws
    for the elements still waiting and keeps those accepted."""
    done = tensorplay.zeros(shape, dtype=tensorplay.bool, device=loc.device)
    x = tensorplay.empty(shape, dtype=loc.dtype, device=loc.device)
    concentration = concentration.expand(shape)
    proposal_r = proposal_r.expand(shape)
    while not bool(done.all()):
        u = tensorplay.rand((3,) + tuple(shape), dtype=loc.dtype, device=loc.device)
        u1, u2, u3 = u.unbind()
        z = tensorplay.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        new = accept & ~done
        x = tensorplay.where(new, (u3 - 0.5).sign() * f.acos(), x)
        done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """The von Mises (circular normal) distribution of angles, mean direction `loc`, concentration
    `concentration`: density exp(kappa cos(x - loc)) / (2 pi I0(kappa))."""

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(VonMises, _instance)
        return self._expanded(new, batch_shape, "loc", "concentration")

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # log I0(kappa) = log(i0e(kappa)) + kappa, finite for any kappa.
        log_i0 = tensorplay.special.i0e(self.concentration).log() + self.concentration
        return self.concentration * tensorplay.cos(value - self.loc) - math.log(2 * math.pi) - log_i0

    @lazy_property
    def _proposal_r(self):
        """The envelope's parameter, 1 + sqrt(1 + 4 kappa^2) over 2 kappa, by its series for tiny kappa."""
        kappa = self.concentration.double()
        tau = 1 + (1 + 4 * kappa.pow(2)).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        series = 1 / kappa + kappa
        r = tensorplay.where(kappa < 1e-5, series, (1 + rho.pow(2)) / (2 * rho))
        return r

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with tensorplay.no_grad():
            angles = _rejection_sample(self.loc.double(), self.concentration.double(), self._proposal_r, shape)
            return angles.to(self.loc.dtype)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance 1 - I1(kappa) / I0(kappa)."""
        kappa = self.concentration
        return 1 - (tensorplay.special.i1e(kappa) / tensorplay.special.i0e(kappa))
