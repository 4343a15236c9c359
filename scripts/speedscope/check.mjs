// Imports Chrome trace-event files with speedscope's own importer, headless,
// and fails on anything it complains about.
//
//   node scripts/speedscope/check.mjs TRACE.json...
//
// speedscope ships as a browser bundle only, so each trace is opened the way
// a browser opens `index.html#profileURL=...`: the pinned release bundle
// runs in jsdom, its fetch of the profile URL is answered with the file, and
// everything the page writes to its console is captured. speedscope reports
// a slice that does not nest (a trace-event lane it cannot turn into one
// call stack) with console.warn: `Tried to end "X" when "Y" was on the top
// of the stack`, `Frame "X" was still open at end of profile`. A trace is
// accepted only when the trace-event importer ran, the page finished the
// import (its title became "FILE - speedscope"), speedscope made one profile
// per lane that has slices, and nothing was warned or failed on the way.
//
// Exit status: 0 every trace was accepted, 1 some trace was rejected (each
// reason on stderr), 2 usage error or missing modules (run
// scripts/deps-speedscope.sh).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const me = 'speedscope-check';
const require = createRequire(import.meta.url);

function die(msg) {
    process.stderr.write(`${me}: ${msg}\n`);
    process.exit(2);
}

let jsdom, releaseDir, version;
try {
    jsdom = require('jsdom');
    const pkg = require.resolve('speedscope/package.json');
    releaseDir = path.join(path.dirname(pkg), 'dist', 'release');
    version = JSON.parse(fs.readFileSync(pkg, 'utf8')).version;
} catch (e) {
    die(`the node modules are not installed (${e.code || e.message}); run scripts/deps-speedscope.sh`);
}
const { JSDOM, VirtualConsole, ResourceLoader } = jsdom;

// What the page says on every load, import or not: its banner, the import
// timer, which importer it chose, and that jsdom has no WebGL (the flame
// graph is drawn with it; the import does not need it).
const BENIGN = [
    ['log', `speedscope v${version}`],
    ['error', 'Failed to create WebGL context: Error: Setup failure'],
    ['time', 'import'],
];
const IMPORTER = 'Importing as Trace Event Format profile';
const HOST = 'speedscope.invalid';
const TIMEOUT_MS = 120000;

// The lanes speedscope makes a profile of: each (pid, tid) with a slice.
function lanesWithSlices(text) {
    const doc = JSON.parse(text);
    const events = Array.isArray(doc) ? doc : doc.traceEvents;
    const lanes = new Set();
    for (const e of events || [])
        if (e.ph === 'X' || e.ph === 'B' || e.ph === 'E')
            lanes.add(`${e.pid}:${e.tid}`);
    return lanes.size;
}

class ReleaseFiles extends ResourceLoader {
    fetch(url) {
        const u = new URL(url);
        const file = path.join(releaseDir, path.basename(u.pathname));
        if (u.host !== HOST || !fs.existsSync(file))
            return null;
        return Promise.resolve(fs.readFileSync(file));
    }
}

const sleep = ms => new Promise(r => setTimeout(r, ms));

// Loads one trace in a fresh page; returns the list of problems (empty:
// accepted) and how many profiles speedscope made.
async function importTrace(file) {
    const bytes = fs.readFileSync(file);
    const problems = [];
    const seen = [];
    const vc = new VirtualConsole();
    for (const level of ['log', 'info', 'debug', 'warn', 'error', 'time', 'timeEnd'])
        vc.on(level, (...a) => seen.push([level, a.map(String).join(' ')]));
    vc.on('jsdomError', e => seen.push(['jsdomError', String(e && e.message)]));
    const onUncaught = e => seen.push(['uncaught', String(e && e.message)]);
    process.on('uncaughtException', onUncaught);
    const name = path.basename(file);
    const html = fs.readFileSync(path.join(releaseDir, 'index.html'), 'utf8');
    const dom = new JSDOM(html, {
        url: `http://${HOST}/index.html#profileURL=` + encodeURIComponent(`http://${HOST}/trace/${name}`),
        runScripts: 'dangerously',
        resources: new ReleaseFiles(),
        virtualConsole: vc,
        pretendToBeVisual: true,
        beforeParse(w) {
            // what a browser has and jsdom lacks; none of it takes part in the import
            w.TextDecoder = TextDecoder;
            w.TextEncoder = TextEncoder;
            w.matchMedia = q => ({ matches: false, media: q, addEventListener() {}, removeEventListener() {},
                                   addListener() {}, removeListener() {} });
            w.Element.prototype.scrollIntoView = function () {};
            w.HTMLCanvasElement.prototype.getContext = () => null;
            w.alert = m => seen.push(['alert', String(m)]);
            // the page's one request: the profile URL, answered with the file
            w.fetch = async () => ({
                ok: true,
                status: 200,
                arrayBuffer: async () => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
            });
        },
    });
    const done = () => seen.some(([l, m]) => (l === 'timeEnd' && m === 'import') || l === 'alert' || l === 'uncaught' ||
                                 (l === 'log' && m.startsWith('Failed to load format')));
    const t0 = Date.now();
    while (!done() && Date.now() - t0 < TIMEOUT_MS)
        await sleep(20);
    await sleep(100); // the first render of the imported profile
    const title = dom.window.document.title;
    const text = dom.window.document.body ? dom.window.document.body.textContent : '';
    dom.window.close();
    process.off('uncaughtException', onUncaught);

    let importer = false;
    for (const [level, msg] of seen) {
        if (BENIGN.some(([l, m]) => l === level && m === msg))
            continue;
        if (level === 'log' && msg === IMPORTER) {
            importer = true;
            continue;
        }
        if (level === 'timeEnd' && msg === 'import')
            continue;
        problems.push(`${level === 'warn' ? 'warning' : level}: ${msg}`);
    }
    if (!done())
        problems.push(`the import did not finish within ${TIMEOUT_MS / 1000} s`);
    else if (!importer)
        problems.push(`speedscope did not read it as a trace-event file (no "${IMPORTER}")`);
    if (title !== `${name} - speedscope`)
        problems.push(`the page title is "${title}", not "${name} - speedscope": no profile was loaded`);
    // the profile selector shows "(1/N)" when there are N > 1 profiles
    const m = /\((\d+)\/(\d+)\)/.exec(text);
    const profiles = m ? Number(m[2]) : 1;
    let want = -1;
    try {
        want = lanesWithSlices(bytes.toString('utf8'));
    } catch (e) {
        problems.push(`not JSON: ${e.message}`);
    }
    if (want >= 0 && problems.length === 0 && profiles !== want)
        problems.push(`speedscope made ${profiles} profiles of ${want} lanes with slices`);
    return { problems, profiles };
}

const files = process.argv.slice(2);
if (files.length === 0 || files.includes('--help') || files.includes('-h')) {
    process.stdout.write(`usage: node check.mjs TRACE.json...\n` +
                         `Imports each trace with speedscope ${version}'s own importer (headless, in jsdom) and\n` +
                         `fails on any import error or nesting warning.\n` +
                         `exit status: 0 all accepted, 1 some rejected, 2 usage error or modules missing\n`);
    process.exit(files.length === 0 ? 2 : 0);
}
let rejected = 0;
for (const f of files) {
    if (!fs.existsSync(f))
        die(`${f}: no such file`);
    const { problems, profiles } = await importTrace(f);
    if (problems.length === 0) {
        process.stdout.write(`${me}: ${f}: ok: speedscope ${version} imported ${profiles} profiles, no warnings\n`);
        continue;
    }
    rejected++;
    const shown = problems.slice(0, 20);
    for (const p of shown)
        process.stderr.write(`${me}: ${f}: ${p.length > 400 ? p.slice(0, 400) + '...' : p}\n`);
    if (problems.length > shown.length)
        process.stderr.write(`${me}: ${f}: ... and ${problems.length - shown.length} more\n`);
    process.stdout.write(`${me}: ${f}: REJECTED: ${problems.length} problems\n`);
}
process.exit(rejected ? 1 : 0);
