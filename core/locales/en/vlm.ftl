# Vision-language and speech models (issue 22 items 3, 4): labels and notes of core/sizing/defaults_multimodal.py.
engine-ctranslate2 = faster-whisper (CTranslate2)
component-vision_encoder = image encoder
component-speech_state = audio windows: decoder caches and encoder output
assumption-vision_text_only = The model reads images, but none were asked for: text only. Each image up to { $megapixels } MP adds ~{ $tokens } tokens to the context — say, e.g., "with 2 images".
assumption-vision_images = { $images } { $images ->
    [one] image
   *[other] images
} per prompt, each up to { $megapixels } MP = ~{ $tokens } tokens in the KV cache; a smaller max_pixels means fewer tokens.
assumption-speech_windows = Transcribed in { $seconds }-second windows: { $windows } { $windows ->
    [one] window
   *[other] windows
} at once, beam size { $beams }, up to { $tokens } text tokens a window.
setting-prompt-images = { $count } { $count ->
    [one] image
   *[other] images
} per prompt
setting-beam = beam { $count }
setting-windows = { $count } { $count ->
    [one] 30-s window
   *[other] 30-s windows
} at once
action-shrink_images = shrink images to ~1 MP (max_pixels { NUMBER($max_pixels, useGrouping: 0) })
action-fewer_prompt_images = { $images } { $images ->
    [one] image
   *[other] images
} per prompt (--limit-mm-per-prompt)
field-images_per_prompt = images per prompt
field-max_pixels = image size (max_pixels)
field-beam_size = beam size
assumption-vision_vllm_profile = At start-up vLLM runs the encoder on the largest image (~{ $tokens } tokens, { $megapixels } MP) and keeps memory for it even if no image comes; lower it with --mm-processor-kwargs '{"{"}"max_pixels": …{"}"}'.
action-fewer_windows = transcribe { $windows } { $windows ->
    [one] 30-s window
   *[other] 30-s windows
} at once (batch_size)
