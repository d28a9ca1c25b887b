#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The installed JSON Schemas (doc/schema/) against real outputs: report JSON of every H200
# trace (and of the older formats kept), several traces at once, the step options; diff JSON of
# the H200 pairs h200_diff.sh compares; a sampled and a host-only run of the fake driver (the
# fields the H200 traces leave null); hand-built traces of a two-rank job and of call stacks
# (the job's figures, the sites' places, diff's place rows). Each output must validate (draft 2020-12, python3-jsonschema)
# and every field in it must be named by the schema: a field added to an output without its
# schema fails here.
import copy
import glob
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:
    sys.exit('FAIL: python3-jsonschema is missing (scripts/deps.sh installs it)')

G = os.environ['GPUSHIM_BIN']
ROOT = os.environ['SOURCE_ROOT']
T = os.path.join(ROOT, 'tests', 'traces', 'h200')
FAILED = []


def strict(schema):
    """The schema with no field left unnamed: additionalProperties false wherever properties
    are listed (the installed one allows fields added later, as the outputs promise)."""
    schema = copy.deepcopy(schema)

    def walk(node):
        if isinstance(node, dict):
            if 'properties' in node and 'additionalProperties' not in node:
                node['additionalProperties'] = False
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(schema)
    return schema


def validators(name):
    with open(os.path.join(ROOT, 'doc', 'schema', name + '.schema.json')) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    return (jsonschema.Draft202012Validator(schema),
            jsonschema.Draft202012Validator(strict(schema)))


def check(what, args, pair, env=None, ok_codes=(0,)):
    p = subprocess.run([G, *args], capture_output=True, text=True, env=env)
    if p.returncode not in ok_codes:
        FAILED.append('%s: exit %d: %s' % (what, p.returncode, p.stderr.strip()[:300]))
        return None
    doc = json.loads(p.stdout)
    for v, how in zip(pair, ('violates', 'has a field the schema does not name')):
        # The root is oneOf (one trace or several): best_match names the deepest error.
        e = jsonschema.exceptions.best_match(v.iter_errors(doc))
        if e is not None:
            FAILED.append('%s %s at %s: %s' % (what, how,
                          '/'.join(map(str, e.absolute_path)) or '(root)', e.message[:300]))
            break
    return doc


def fake_runs(tmp):
    """A sampled and a host-only run of the fake driver (lib.sh's use_fake_cupti)."""
    env = dict(os.environ)
    libdirs = [os.path.dirname(env['FAKE_CUPTI_LIB']), env['FAKE_LIBDIR']]
    env['LD_LIBRARY_PATH'] = ':'.join(libdirs + [env.get('LD_LIBRARY_PATH', '')])
    runs = {'sampled': {'GPUSHIM_MODE': 'sampled', 'GPUSHIM_WINDOW_MS': '20',
                        'GPUSHIM_WINDOW_EVERY_MS': '100', 'GPUSHIM_CUPTI': env['FAKE_CUPTI_LIB']},
            'host': {'GPUSHIM_MODE': 'host'}}
    traces = {}
    for mode, settings in runs.items():
        traces[mode] = os.path.join(tmp, mode + '.trace')
        run_env = dict(env, LD_PRELOAD=env['GPUSHIM_SHIM'], GPUSHIM_OUTPUT=traces[mode],
                       **settings)
        subprocess.run([env['FAKE_CLIENT'], 'paced', '400', '1000'], check=True, env=run_env,
                       stdout=subprocess.DEVNULL)
    return traces


def main():
    report = validators('report')
    diff = validators('diff')
    traces = sorted(glob.glob(os.path.join(T, '*.trace')))
    traces += sorted(glob.glob(os.path.join(ROOT, 'tests', 'traces', 'h200_1.*', '*.trace')))
    for t in traces:
        check('report ' + os.path.relpath(t, ROOT), ['report', '--format', 'json', t], report)
    tt = lambda *names: [os.path.join(T, n + '.trace') for n in names]
    many = {
        'report torch_items_10 torch_items_30': tt('torch_items_10', 'torch_items_30'),
        'report memory_full torch_die_segv torch_train': tt('memory_full', 'torch_die_segv',
                                                            'torch_train'),
    }
    for what, args in many.items():
        doc = check(what, ['report', '--format', 'json', *args], report)
        if doc is not None and len(doc.get('reports', [])) != len(args):
            FAILED.append('%s: %d reports for %d traces' % (what, len(doc.get('reports', [])),
                                                           len(args)))
    for opts in (['--whole'], ['--steps', '5:20'], ['--window', '0.5:1.5']):
        check('report %s torch_train' % ' '.join(opts),
              ['report', '--format', 'json', *opts, *tt('torch_train')], report)

    pairs = [
        (tt('diff_host_sync_a', 'diff_host_sync_b'), []),
        (tt('diff_host_sync_end', 'diff_host_sync_a'), ['--metric', 'busy', '--fail-on', '5']),
        (tt('diff_host_sync_end', 'diff_host_sync_a'), ['--metric', 'lost', '--fail-on', '5']),
        (tt('diff_launch_bound_10k', 'diff_launch_bound_20k'), ['--fail-on', '5']),
        (tt('compute_bound', 'bandwidth_bound'), []),
        (tt('torch_items_10', 'torch_items_10'), ['--fail-on', '1']),
        (tt('torch_items_10', 'torch_items_30'), ['--fail-on', '5']),
        (tt('nvtx_steps', 'steps_nvtx'), ['--fail-on', '5']),
        (tt('steps_nvtx', 'nvtx_steps'), []),
        (tt('ranges', 'ranges_emit'), ['--fail-on', '5']),
        ([','.join(tt('torch_items_10', 'torch_items_30'))] + tt('torch_items_10'), []),
        (tt('torch_items_10', 'diff_host_sync_a'), ['--metric', 'step', '--fail-on', '50']),
    ]
    for files, opts in pairs:
        what = 'diff %s %s' % (' '.join(opts), ' '.join(os.path.relpath(f, T) for f in files))
        # 1: a regression found, 3: the gate's metric missing on a side; the JSON says so.
        check(what, ['diff', '--format', 'json', *opts, *files], diff, ok_codes=(0, 1, 3))

    with tempfile.TemporaryDirectory(prefix='gpushim-schema.') as tmp:
        fake = fake_runs(tmp)
        for mode, t in fake.items():
            doc = check('report of a %s run' % mode, ['report', '--format', 'json', t], report)
            if doc is not None and doc['sampling']['mode'] != mode:
                FAILED.append('%s run: sampling.mode %s' % (mode, doc['sampling']['mode']))
        check('diff sampled host', ['diff', '--format', 'json', fake['sampled'], fake['host']],
              diff)
        # hand-built: a two-rank job with a straggler; call stacks placing the sites (two
        # traces whose places differ: diff rows of kind place)
        hostile = os.environ['HOSTILE_TRACE']
        for spike in ([], ['2000000']):	# without steps found, and with
            subprocess.run([hostile, 'job', tmp, '20', '3000000', '0'] + spike, check=True)
            ranks = [os.path.join(tmp, 'rank%d.trace' % i) for i in range(2)]
            doc = check('report of a two-rank job', ['report', '--format', 'json', *ranks],
                        report)
            s = (doc or {}).get('job', {}).get('straggler') or {}
            if doc is not None and not (s.get('latest') and
                                        (s['latest']['step'] is not None) == bool(spike)):
                FAILED.append('two-rank job %s: straggler %s' % (spike, s))
        stacks = []
        for name in ('a', 'b'):
            t = os.path.join(tmp, 'stacks_%s.trace' % name)
            subprocess.run([hostile, 'stacks', t, '/nonexistent/%s.py' % name], check=True)
            check('report of call stacks (%s)' % name, ['report', '--format', 'json', t], report)
            stacks.append(t)
        doc = check('diff of call stacks', ['diff', '--format', 'json', *stacks], diff)
        if doc is not None and not any(c['kind'] == 'place' for c in doc['changes']):
            FAILED.append('diff of call stacks: no place rows')

    if FAILED:
        print('\n'.join('FAIL: ' + f for f in FAILED), file=sys.stderr)
        sys.exit(1)
    print('json_schema: %d traces\' reports, %d diffs and the fake runs valid' %
          (len(traces) + len(many) + 3, len(pairs)))


main()
