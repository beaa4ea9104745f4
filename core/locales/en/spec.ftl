## Speculative decoding and hybrid models (issue 22 items 5 and 6)

component-recurrent_state = Mamba / linear-attention state
component-draft_model = draft (model or head)
component-draft_kv_cache = draft's KV cache
component-speculative_scratch = verifying k+1 tokens

speculative-method-draft_model = draft model { $draft }
speculative-method-eagle = EAGLE head
speculative-method-eagle3 = EAGLE-3 head
speculative-method-mtp = the model's MTP layer
speculative-method-ngram = n-gram (prompt lookup)

answer-speculative = ⚡ Speculative decoding ({ $method }, k = { $tokens }): +{ $extra } per card, { $without } without it. Speed-up ~{ $speedup }× for one user ({ $accept_low }–{ $accept_high }% of tokens accepted: { $cite }); less as users grow.
answer-hybrid = 🧬 Hybrid model: only { $attention } of { $layers } layers keep a KV cache; the other { $recurrent } keep a state of { $state } per request{ $fp32 ->
    [yes] {" "}(SSM state in fp32)
   *[no] {""}
}, which does not grow with the context.

assumption-hybrid_state = Hybrid model: { $attention } attention layers of { $layers } keep a KV cache; { $recurrent } recurrent layers ({ $kind }) keep a fixed-size state, { $per_sequence_mb } MB per sequence (shapes as vLLM's MambaStateShapeCalculator).
assumption-speculative_source = Speculative decoding speed-up: Leviathan et al. 2023's formula, the acceptance rate from: { $source }
assumption-speculative_vllm = { $method } is a head or layer of the model, which vLLM and SGLang run (transformers generate() takes a draft model or n-gram only): sized as vLLM.

field-speculative = speculative decoding
field-draft_model = draft model
field-num_speculative_tokens = speculative tokens
