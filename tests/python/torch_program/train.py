"""A small PyTorch training program in several files, written against `torch` as users write it:
tests/python/test_run_unedited.py runs it unedited through `python -m tensorplay.run` and compares
what it prints with the same files edited to `import tensorplay as torch`."""

import argparse
import importlib
import json
import os
import sys

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from model import Classifier
from toydata import Blobs

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--workers", type=int, default=0)
args = parser.parse_args()

torch.manual_seed(0)
torch.backends.cudnn.benchmark = True
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
optim = importlib.import_module("torch.optim")

train = DataLoader(Blobs(96, seed=1), batch_size=16, shuffle=True, num_workers=args.workers)
test = DataLoader(Blobs(48, seed=2), batch_size=48)
model = Classifier().to(device)
optimizer = optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
losses = []
for epoch in range(args.epochs):
    model.train()
    for x, y in train:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x.to(device)), y.to(device))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    scheduler.step()

model.eval()
with torch.no_grad():
    x, y = next(iter(test))
    accuracy = (model(x).argmax(dim=1) == y).float().mean().item()

print(json.dumps({
    "argv": [os.path.basename(sys.argv[0])] + sys.argv[1:],
    "name": __name__,
    "losses": losses,
    "accuracy": accuracy,
    "weights": sum(p.double().sum().item() for p in model.state_dict().values()),
    "cuda": [torch.cuda.is_available(), torch.version.cuda, torch.backends.cudnn.benchmark],
    "types": [isinstance(loss, torch.Tensor), isinstance(model, torch.nn.Module),
              isinstance(train.dataset, torch.utils.data.Dataset), type(loss) is torch.Tensor],
}))
