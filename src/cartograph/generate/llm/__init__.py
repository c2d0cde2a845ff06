"""The operator's LLM generator (``--generator llm``): endpoint client, prompt and answer
checks, answer cache, and the generator that falls back to the bootstrap text per tool."""
