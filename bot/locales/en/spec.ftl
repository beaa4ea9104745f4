## /about: speculative decoding and hybrid models (issue 22 items 5 and 6)

about-spec =
    <b>Speculative decoding and hybrid models</b>
    A draft model, an EAGLE / EAGLE-3 head, an MTP layer or n-gram: the draft's weights, its KV cache and the fp32 probabilities of the k+1 verified tokens are added; the answer shows the memory with and without it and the expected speed-up for one user (Leviathan et al. 2023's formula, acceptance rates from published measurements: DeepSeek-V3, EAGLE-3 checkpoints in vLLM). Memory accuracy is the engine's class (vLLM, Transformers): no published memory measurement with a draft was found; the speed-up is an upper estimate for one user.
    Hybrid models (Qwen3-Next, Jamba, Mamba-2 hybrids from Hugging Face): a KV cache in the attention layers only, a fixed-size state per request in the others (shapes as vLLM's). The KV cache matches the Jamba papers' published figures (4 GB for Jamba 1.5 Mini, 9 GB for Large at 256K). Falcon-H1 and Granite-4.0-H only by their Hugging Face id: they are not in the catalogue.
