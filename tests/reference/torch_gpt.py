"""A nanoGPT-structured GPT in PyTorch, mirroring AltGrad's engine: module names and shapes follow
nanoGPT's model.py (so AltGrad checkpoints load with load_state_dict(strict=True)), plus the
engine's variants (RMSNorm, SwiGLU with its two input projections in one c_fc Linear).
Used by tests/reference/torch_crosscheck.py and bench/torch_train_step.py."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def read_safetensors(path):
    """Reads an F32 safetensors file: ({name: tensor}, metadata)."""
    import json
    import struct
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    body = data[8 + length:]
    metadata = header.pop("__metadata__", {})
    tensors = {}
    for name, entry in header.items():
        assert entry["dtype"] == "F32", name
        begin, end = entry["data_offsets"]
        tensors[name] = torch.frombuffer(bytearray(body[begin:end]), dtype=torch.float32).reshape(entry["shape"])
    return tensors, metadata


class RMSNorm(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def norm(cfg, n):
    return RMSNorm(n, 1e-5) if cfg["norm"] == "rmsnorm" else LayerNorm(n, cfg["bias"])


class LayerNorm(nn.Module):
    """nanoGPT's LayerNorm: the bias is optional (nn.LayerNorm before PyTorch 2.1 cannot drop it)."""

    def __init__(self, n, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.bias = nn.Parameter(torch.zeros(n)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C = cfg["n_embd"]
        self.n_head = cfg["n_head"]
        self.c_attn = nn.Linear(C, 3 * C, bias=cfg["bias"])
        self.c_proj = nn.Linear(C, C, bias=cfg["bias"])
        # Identities where the attention core's operands pass: the places altgrad.torch.quantize_model
        # puts the engine's h.{i}.attn.q|k|v|probs points.
        self.q, self.k, self.v, self.probs = nn.Identity(), nn.Identity(), nn.Identity(), nn.Identity()
        T = cfg["block_size"]
        # Not persistent, as in nanoGPT on PyTorch 2 (flash attention): not part of the state_dict.
        self.register_buffer("mask", torch.tril(torch.ones(T, T)).view(1, 1, T, T), persistent=False)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = (point(t) for point, t in zip((self.q, self.k, self.v), self.c_attn(x).split(C, dim=2)))
        hs = C // self.n_head
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        y = self.probs(F.softmax(att, dim=-1)) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C, H = cfg["n_embd"], cfg["mlp_hidden"]
        self.swiglu = cfg["mlp"] == "swiglu"
        # SwiGLU keeps its two input projections in one Linear: rows [gate | value].
        self.c_fc = nn.Linear(C, 2 * H if self.swiglu else H, bias=cfg["bias"])
        self.c_proj = nn.Linear(H, C, bias=cfg["bias"])

    def forward(self, x):
        h = self.c_fc(x)
        if self.swiglu:
            gate, value = h.chunk(2, dim=-1)
            h = F.silu(gate) * value
        else:
            h = F.gelu(h)  # exact erf form, nanoGPT's nn.GELU()
        return self.c_proj(h)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = norm(cfg, cfg["n_embd"])
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = norm(cfg, cfg["n_embd"])
        self.mlp = MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(cfg["vocab_size"], cfg["n_embd"]),
            wpe=nn.Embedding(cfg["block_size"], cfg["n_embd"]),
            h=nn.ModuleList([Block(cfg) for _ in range(cfg["n_layer"])]),
            ln_f=norm(cfg, cfg["n_embd"]),
        ))
        self.lm_head = nn.Linear(cfg["n_embd"], cfg["vocab_size"], bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied, as nanoGPT

    def forward(self, idx, targets):
        T = idx.size(1)
        pos = torch.arange(T, dtype=torch.long, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


