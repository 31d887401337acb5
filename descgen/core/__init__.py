"""Layer 0: what every other module uses: the exception tree and findings, how a typed or pasted integer is read,
the field transforms, the API's Literal types, the version, the spec errata, the worker pools' plumbing, the
bounded memos."""
