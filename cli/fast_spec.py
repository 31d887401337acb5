"""The fast path's option table (descgen.cli.fast), generated from the click commands:
python -m descgen.cli.fast > cli/fast_spec.py (tests/test_cli_fast.py checks it is current).

Per command: its click-free body (module, function), the layers of its callback, and per option
("flag", dest, opts, secondary opts, value when not given) or
("option", dest, opts, required, value when not given, reader description: descgen.cli.values).
"""

from typing import Any

COMMANDS: dict[str, dict[str, Any]] = {
    'idesc': {
        'body': ('descgen.cli.encoders', 'idesc'),
        'layers': (('context', ('cta_group', 'ws', 'sp', 'scale_vec', 'a_tmem', 'arch')), ('output',)),
        'params': (
            ('option', 'kind', ('--kind',), True, None, ('kind',)),
            ('option', 'm', ('--m',), True, None, ('uint', 64, 'INT', False)),
            ('option', 'n', ('--n',), True, None, ('uint', 64, 'INT', False)),
            ('option', 'atype', ('--atype',), False, None, ('typechoice', 'atype', 'str', True)),
            ('option', 'btype', ('--btype',), False, None, ('typechoice', 'btype', 'str', True)),
            ('option', 'dtype', ('--dtype',), False, None, ('typechoice', 'dtype', 'str', True)),
            ('option', 'a_major', ('--a-major',), False, None, ('choice', 'majors', 'str', True)),
            ('option', 'b_major', ('--b-major',), False, None, ('choice', 'majors', 'str', True)),
            ('flag', 'negate_a', ('--negate-a',), (), False),
            ('flag', 'negate_b', ('--negate-b',), (), False),
            ('flag', 'saturate', ('--saturate',), (), False),
            ('flag', 'sparse', ('--sparse',), (), False),
            ('option', 'sparsity_selector', ('--sparsity-selector',), False, 0, ('uint', 64, 'INT', False)),
            ('option', 'max_shift', ('--max-shift',), False, None, ('choice', 'max_shift', 'int', False)),
            ('option', 'scale_type', ('--scale-type',), False, None, ('typechoice', 'scale_type', 'str', True)),
            ('option', 'a_sf_id', ('--a-sf-id',), False, 0, ('uint', 64, 'INT', False)),
            ('option', 'b_sf_id', ('--b-sf-id',), False, 0, ('uint', 64, 'INT', False)),
            ('option', 'k', ('--k',), False, None, ('uint', 64, 'INT', False)),
            ('flag', 'functions', ('--functions',), (), False),
            ('option', 'ctx_cta_group', ('--cta-group',), False, None, ('choice', ('1', '2'), 'int', False)),
            ('flag', 'ctx_ws', ('--ws',), ('--no-ws',), None),
            ('flag', 'ctx_sp', ('--sp',), ('--no-sp',), None),
            ('option', 'ctx_scale_vec', ('--scale-vec',), False, None, ('scalevec',)),
            ('flag', 'ctx_a_tmem', ('--a-tmem',), ('--no-a-tmem',), None),
            ('option', 'ctx_arch', ('--arch',), False, None, ('arch', True)),
            ('flag', 'as_json', ('--json',), (), False),
            ('flag', 'table', ('--table',), (), False),
            ('flag', 'plain', ('--plain',), (), False),
            ('option', 'fmt', ('--format',), False, None, ('choice', 'formats', 'str', False)),
            ('option', 'name', ('--name',), False, None, ('str',)),
            ('flag', 'quiet', ('-q', '--quiet'), (), False),
        ),
    },
    'zcm': {
        'body': ('descgen.cli.encoders', 'zcm'),
        'layers': (('context', ('ws',)), ('output',)),
        'params': (
            ('option', 'skip_span', ('--skip-span',), True, None, ('uint', 64, 'INT', False)),
            ('option', 'use_span', ('--use-span',), True, None, ('uint', 64, 'INT', False)),
            ('option', 'start_count', ('--start-count',), False, (0, 0, 0, 0), ('uintlist', 4, 64)),
            ('option', 'first_span', ('--first-span',), False, (0, 0, 0, 0), ('uintlist', 4, 64)),
            ('flag', 'nonzero_mask', ('--nonzero-mask',), ('--no-nonzero-mask',), True),
            ('option', 'column_shift', ('--column-shift',), False, 0, ('uint', 64, 'INT', False)),
            ('option', 'mask_m', ('--m',), False, None, ('uint', 64, 'INT', False)),
            ('option', 'mask_n', ('--n',), False, None, ('uint', 64, 'INT', False)),
            ('flag', 'functions', ('--functions',), (), False),
            ('flag', 'ctx_ws', ('--ws',), ('--no-ws',), None),
            ('flag', 'as_json', ('--json',), (), False),
            ('flag', 'table', ('--table',), (), False),
            ('flag', 'plain', ('--plain',), (), False),
            ('option', 'fmt', ('--format',), False, None, ('choice', 'formats', 'str', False)),
            ('option', 'name', ('--name',), False, None, ('str',)),
            ('flag', 'quiet', ('-q', '--quiet'), (), False),
        ),
    },
}
