// Open pages in a headless Chromium with WebNN, wait for the result object each page exposes,
// print the results as JSON on stdout.
//
//   node run_page.mjs URL [URL ...]        one job per URL, awaiting globalThis.__webnnResult
//   node run_page.mjs --jobs JOBS.json     jobs described in a file ("-": stdin)
//   node run_page.mjs --prepare            unpack the browser, print its path and version
//   --lifeline                             (with any of the above) stdin is a pipe from the
//                                          caller: when it closes, or the parent process
//                                          changes (the caller died), close the browser, exit
//
// A job is {url, result?, ready?, fill?, click?, timeoutMs?}: open `url`; when `ready` names a
// global promise, await it (a result with ok === false ends the job); set the value of each
// element of `fill` ({selector: value}, firing "input"/"change"); click `click`; await the
// global promise named `result` (default "__webnnResult"). ArrayBuffers and typed arrays in
// the result come back as {"$base64": ..., "type": ...}. Output: {browser, executable,
// results: [{ok, ..., console: [...]}]}; a job that throws or times out gives
// {ok: false, stage, error, status} (status: the page's #status text, if any). The answer is
// ONE line of ASCII: every non-ASCII character, U+2028, U+2029 and U+0085 included, is
// written as a \uXXXX escape, so a reader may split the output at "\n" and nothing else.
//
// The browser never outlives this script: it is launched over a pipe (--remote-debugging-
// pipe: Chromium exits when the pipe closes, even if this process is SIGKILLed), and SIGINT,
// SIGTERM, SIGHUP and the --lifeline triggers kill its process group and exit (130, 143,
// 129, 1).
//
// Browser: WEBNN_CHROME (an executable) if set, else the npm package @sparticuz/chromium,
// which unpacks itself into the temp folder (set TMPDIR to a private folder). The npm
// packages are resolved from WEBNN_BROWSER_HOME (a folder with node_modules; default: this
// script's folder). WebNN runs on the CPU (LiteRT/XNNPACK) with the flags below.

import {readFileSync} from "node:fs";
import {createRequire} from "node:module";
import {dirname, join} from "node:path";
import {fileURLToPath, pathToFileURL} from "node:url";

const FLAGS = ["--no-sandbox", "--headless=new", "--disable-gpu-sandbox",
                      "--enable-features=WebMachineLearningNeuralNetwork"];
const HOME = process.env.WEBNN_BROWSER_HOME || dirname(fileURLToPath(import.meta.url));

async function load(name) {
  const require = createRequire(join(HOME, "package.json"));
  let path;
  try {
    path = require.resolve(name);
  } catch {
    throw new Error(`npm package ${name} is not installed in ${HOME} (run npm install there)`);
  }
  const mod = await import(pathToFileURL(path).href);
  return mod.default ?? mod;
}

async function executable() {
  if (process.env.WEBNN_CHROME) return process.env.WEBNN_CHROME;
  const chromium = await load("@sparticuz/chromium");
  return chromium.executablePath();
}

let browser = null;

// Kill the browser's process group (puppeteer launches it as a session of its own) at once.
function killBrowser() {
  const pid = browser?.process()?.pid;
  if (!pid) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    try { process.kill(pid, "SIGKILL"); } catch { /* gone */ }
  }
}

// Exit now; puppeteer's own "exit" hook also kills a browser still being launched.
function shutdown(code) {
  killBrowser();
  process.exit(code);
}

for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143], ["SIGHUP", 129]]) {
  process.on(signal, () => shutdown(code));
}

function watchLifeline() {
  const stdin = process.stdin;
  for (const event of ["end", "close", "error"]) stdin.on(event, () => shutdown(1));
  stdin.on("data", () => {});
  stdin.resume();
  stdin.unref?.();
  const parent = process.ppid;
  setInterval(() => { if (process.ppid !== parent) shutdown(1); }, 250).unref();
}

function asciiJson(value) {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g,
    (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}

async function launch(puppeteer, exe) {
  browser = await puppeteer.launch({executablePath: exe, headless: true, args: [...FLAGS],
                                    pipe: true, handleSIGINT: false, handleSIGTERM: false,
                                    handleSIGHUP: false});
  return browser;
}

function parseArgs(argv) {
  const jobs = [];
  let prepare = false;
  let lifeline = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--prepare") prepare = true;
    else if (arg === "--lifeline") lifeline = true;
    else if (arg === "--jobs") {
      const file = argv[++i];
      const text = readFileSync(file === "-" ? 0 : file, "utf8");
      const spec = JSON.parse(text);
      jobs.push(...(Array.isArray(spec) ? spec : spec.jobs));
    } else if (arg.startsWith("--")) throw new Error(`unknown option ${arg}`);
    else jobs.push({url: arg});
  }
  return {jobs, prepare, lifeline};
}

// Runs inside the page: awaits the global promise and encodes binary members.
async function awaitResult(name) {
  const encode = (value) => {
    if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) {
      const bytes = value instanceof ArrayBuffer ? new Uint8Array(value)
        : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
      let text = "";
      for (let i = 0; i < bytes.length; i += 0x8000) {
        text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      }
      return {$base64: btoa(text), type: value.constructor.name};
    }
    if (Array.isArray(value)) return value.map(encode);
    if (value && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, encode(v)]));
    }
    if (typeof value === "bigint") return String(value);
    return value;
  };
  return encode(await globalThis[name]);
}

async function runJob(job) {
  const page = await browser.newPage();
  const console_ = [];
  page.on("console", (m) => console_.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => console_.push(`pageerror: ${e.message}`));
  const timeoutMs = job.timeoutMs ?? 120000;
  page.setDefaultTimeout(timeoutMs);
  let stage = "open";
  const work = async () => {
    await page.goto(job.url, {waitUntil: "load"});
    if (job.ready) {
      stage = "ready";
      await page.waitForFunction((n) => globalThis[n] !== undefined, {}, job.ready);
      const ready = await page.evaluate(awaitResult, job.ready);
      if (ready && ready.ok === false) return ready;
    }
    stage = "fill";
    for (const [selector, value] of Object.entries(job.fill ?? {})) {
      await page.$eval(selector, (el, v) => {
        el.value = v;
        el.dispatchEvent(new Event("input", {bubbles: true}));
        el.dispatchEvent(new Event("change", {bubbles: true}));
      }, String(value));
    }
    if (job.click) {
      stage = "click";
      await page.click(job.click);
    }
    stage = "result";
    const name = job.result ?? "__webnnResult";
    await page.waitForFunction((n) => globalThis[n] !== undefined, {}, name);
    return await page.evaluate(awaitResult, name);
  };
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no result after ${timeoutMs} ms`)), timeoutMs);
  });
  let result;
  try {
    result = await Promise.race([work(), timeout]);
  } catch (e) {
    let status = null;
    try {
      status = await page.evaluate(() => document.getElementById("status")?.textContent ?? null);
    } catch { /* page gone */ }
    result = {ok: false, stage, error: String(e?.message ?? e), status};
  } finally {
    clearTimeout(timer);
  }
  try {
    await page.close();
  } catch { /* the browser may be gone */ }
  if (result === null || typeof result !== "object") result = {ok: false, value: result};
  result.console = console_.slice(-50);
  return result;
}

async function main() {
  const {jobs, prepare, lifeline} = parseArgs(process.argv.slice(2));
  if (lifeline) watchLifeline();
  const exe = await executable();
  if (prepare && jobs.length === 0) {
    const puppeteer = await load("puppeteer-core");
    await launch(puppeteer, exe);
    const version = await browser.version();
    await browser.close();
    process.stdout.write(asciiJson({browser: version, executable: exe, flags: FLAGS}) + "\n");
    return;
  }
  if (jobs.length === 0) {
    throw new Error("usage: node run_page.mjs [--lifeline] URL... | --jobs FILE | --prepare");
  }
  const puppeteer = await load("puppeteer-core");
  await launch(puppeteer, exe);
  const version = await browser.version();
  const results = [];
  try {
    for (const job of jobs) results.push(await runJob(job));
  } finally {
    await browser.close();
  }
  process.stdout.write(asciiJson({browser: version, executable: exe, flags: FLAGS,
                                  results}) + "\n");
}

main().catch((e) => {
  process.stderr.write(`run_page: ${e?.stack ?? e}\n`);
  killBrowser();
  process.exit(1);
});
