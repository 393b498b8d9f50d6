"""`catalog calibrate APP --log FILE|-`: a vLLM, llama.cpp or SGLang boot log -> calibration rows, the fit before
and after.

The rows go to the app's file (what the engine allocated for this app) or to its model's file (`weights_loaded`,
per weight file); `--write` adds them, a new row replacing an older one of the same measure, image and device
(generator/fit/calibrate.py `with_rows`). Only the `calibration:` block of each file is rewritten: every other line
stays byte-identical, and the result is validated before it replaces the file.
"""


import io
import json
import math
import sys
from collections.abc import Iterator
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Annotated, Any

import typer

from generator.cli.app import CatalogOpt, JsonOpt, app, load_catalog, use_catalog
from generator.core import CatalogError, InputError, Problem, UsageError
from generator.core.redact import redact
from generator.core import safe_line

AppArg = Annotated[str, typer.Argument(help="The app the log belongs to.", show_default=False)]
LogOpt = Annotated[str, typer.Option("--log", help="The engine's boot log: a file, or - for standard input.")]
WriteOpt = Annotated[bool, typer.Option("--write", help="Write the rows into the catalog (default: only show them).")]
SourceOpt = Annotated[str | None, typer.Option("--source", help="Where the log comes from (default: its path).")]
ImageOpt = Annotated[str | None, typer.Option("--image", help="Engine image or build (default: the app's image).")]
DeviceOpt = Annotated[str | None, typer.Option("--device", help="The GPU and driver the log was taken on.")]
CapOpt = Annotated[int | None, typer.Option("--cap-mib", help="vLLM: the cap it saw (default: the log, else the app).")]
UtilOpt = Annotated[float | None, typer.Option(
    "--util", help="vLLM: gpu_memory_utilization (default: the log, else the app).")]
GpuOpt = Annotated[float | None, typer.Option("--gpu-mib", help="llama.cpp: the process's GPU memory (NVML), MiB.")]
DateOpt = Annotated[str | None, typer.Option("--date", help="When the log was taken, YYYY-MM-DD (default: today).")]
NoteOpt = Annotated[str | None, typer.Option("--note", help="Appended to every row's `what` (e.g. what differed).")]


@app.command()
def calibrate(name: AppArg, log: LogOpt, write: WriteOpt = False, catalog: CatalogOpt = None, as_json: JsonOpt = False,
              source: SourceOpt = None, image: ImageOpt = None, device: DeviceOpt = None, cap_mib: CapOpt = None,
              util: UtilOpt = None, gpu_mib: GpuOpt = None, when: DateOpt = None, note: NoteOpt = None) -> None:
    """Read a vLLM, llama.cpp or SGLang boot log into calibration rows; show the fit before and after (--write: keep
    them)."""
    from generator.fit import calibrate as cal

    when_date = _options(when, gpu_mib, cap_mib, util)
    cat = load_catalog(use_catalog(catalog, command="calibrate", writes=write, quiet=as_json))
    r = cat.select([name], include_removed=True)[0]
    lines, where = _read(log)
    parsed = cal.parse(lines, where)
    from generator.engines import family_for, family_of

    engine = family_of(r.stack)  # the family whose boot-log lines the log must hold (fit/calibrate.py `needs`)

    if parsed.engine is None:
        raise refuse(where, f"holds none of what `catalog calibrate` reads; a {engine} boot log needs "
                   f"{cal.needs(engine)}")
    if parsed.engine != engine:
        raise refuse(where, f"is a {parsed.engine} log, but {name} runs on {engine} ({r.stack.id}): "
                            "give that app's log")
    realshape = _check_model(r, parsed, where)
    settings_util, settings_cap = _app_budget(r)
    prov = cal.Provenance(source=source or where, image=image or r.stack.image, device=device,
                          cap_mib=cap_mib or settings_cap, util=util or settings_util, quant=r.app.quantization,
                          when=when_date)
    rows = cal.rows_of(parsed, prov)
    if gpu_mib is not None and family_for(r.stack).llama_server:
        rows += _gpu_rows(parsed, prov, gpu_mib)
    if note:
        rows = cal.noted(rows, note, prov)
    skipped = [row for row in rows if row.target == "model"] if realshape else []
    rows = [row for row in rows if row not in skipped]
    if not rows:
        raise refuse(where, f"has no figure `catalog calibrate` can turn into a row; it needs {cal.needs(engine)}")
    before = _summary(r)
    after_r = _with(r, rows)
    after = _summary(after_r)
    written: list[str] = []
    if write:
        written = _write(cat, r, rows)
    _report(name, rows, skipped, before, after, written, as_json)


def refuse(where: str, message: str) -> InputError:
    """The log `where` cannot be used: exit 1, nothing written."""
    return InputError([Problem(where, None, None, message)])


# A boot log's memory lines come in its first few thousand lines; a vLLM boot at debug level is a few MB. A log
# larger than this is not one boot (`kubectl logs -f` never ends; /dev/zero neither): refused, never held whole.
MAX_LOG_BYTES = 16 * 2**20
MAX_LOG_LINE = 64 * 2**10  # the longest line kept (vLLM's config line is ~3 KB); the rest of a line is skipped


def _read(log: str) -> tuple[Iterator[str], str]:
    """The log's lines, read within MAX_LOG_BYTES (core/bounded.py): a file must be a regular file (no FIFO, device
    or link), standard input is read line by line and refused past the cap."""
    from generator.core import iter_lines, read_regular_file

    if log == "-":
        raw = getattr(sys.stdin, "buffer", None)  # a text stream without one (a test's StringIO): read within the cap
        source = raw if raw is not None else io.BytesIO(sys.stdin.read(MAX_LOG_BYTES + 1).encode("utf-8"))
        stream = iter_lines(source, MAX_LOG_BYTES, "stdin", "the boot log", max_line=MAX_LOG_LINE)
        return (line.decode("utf-8", "replace") for line in stream), "stdin"
    data = read_regular_file(Path(log), MAX_LOG_BYTES, "the boot log")
    return iter(data.decode("utf-8", "replace").splitlines()), log


def _options(when: str | None, gpu_mib: float | None, cap_mib: int | None, util: float | None) -> date:
    """The options' values checked before anything is read: a date that is one, finite figures in range."""
    for flag, value, top in (("--gpu-mib", gpu_mib, 2**20), ("--cap-mib", cap_mib, 2**20), ("--util", util, 1.0)):
        if value is not None and not (math.isfinite(value) and 0 < value <= top):
            raise UsageError(f"{flag} {value!r}: give a number above 0 and at most {top:,}"
                             + (" MiB (1 TiB)" if flag != "--util" else " (a fraction of the GPU)"))
    if not when:
        return date.today()
    try:
        return date.fromisoformat(when)
    except ValueError:
        raise UsageError(f"--date {safe_line(when, 40)!r}: not a date; give YYYY-MM-DD") from None


def _check_model(r: Any, parsed: Any, where: str) -> bool:
    """The log must be of this app's model; returns whether it is a real-shape probe of it."""
    weight = r.model.weight(r.app.quantization)
    names = {r.model.id, weight.repo, weight.file or "", weight.repo.split("/")[-1]} - {""}
    realshape_name = f"{r.model.id}-{r.app.quantization}"
    _one_model(r, parsed, where, names | _drafter_names(r), realshape_name)
    said = [n for n in (parsed.model, Path(parsed.model_file).name if parsed.model_file else "") if n]
    if not said:
        return False
    if any(s.startswith(realshape_name) and s.endswith("realshape") for s in said):
        return True
    if parsed.model_file and Path(parsed.model_file).name.startswith(realshape_name):
        return True
    if any(any(s.endswith(n) for n in names) for s in said):
        return False
    raise refuse(where, f"belongs to another model ({' / '.join(said)}); {r.app.name} serves {weight.repo}"
               f"{'/' + weight.file if weight.file else ''}")


def _drafter_names(r: Any) -> set[str]:
    """The files of the model's drafters: a llama-server with a draft model loads it in the same boot."""
    out: set[str] = set()
    for drafter in r.model.drafters:
        for w in drafter.weights:
            out |= {w.repo, w.file or "", w.repo.split("/")[-1]}
    return out - {""}


def _one_model(r: Any, parsed: Any, where: str, names: set[str], realshape_name: str) -> None:
    """A log that loads a second model (two boots pasted together, another app's boot after this one's) would give
    this app the other model's rows: refused, naming both, unless the second is the model's own drafter."""
    named = parsed.named()
    if len(named) < 2:
        return

    def ours(name: str) -> bool:
        base = Path(name).name
        return any(name.endswith(n) or base.endswith(n) for n in names) or base.startswith(realshape_name)

    first_line, first = named[0]
    for line, other in named[1:]:
        if not ours(other) or not ours(first):
            raise refuse(where, f"loads two models: {first} (line {first_line}) and {other} (line {line}); give "
                                f"one boot of {r.app.name} ({weight_label(r)})")


def weight_label(r: Any) -> str:
    weight = r.model.weight(r.app.quantization)
    return str(weight.repo) + (f"/{weight.file}" if weight.file else "")


def _app_budget(r: Any) -> tuple[float | None, int]:
    """The utilization (vLLM) and the cap the app runs under: its own, or the fit's when it leaves them out."""
    from generator.engines import decided
    from generator.fit import sized

    return decided(r := sized(r)).budget_utilization, int(r.app.gpu_memory_mib)


def _gpu_rows(parsed: Any, prov: Any, gpu_mib: float) -> list[Any]:
    """gpu_total (NVML) and cuda_context = NVML minus every CUDA buffer llama.cpp reported."""
    from generator.engines import Row, cal

    on_gpu = sum(x.value for x in parsed.readings if x.kind in ("kv_buffer", "recurrent_state"))
    on_gpu += sum(x.value for x in parsed.readings if x.kind in ("model_buffer", "compute_buffer")
                  and x.device.startswith("CUDA") and not x.device.startswith("CUDA_Host"))
    return [Row("app", cal("gpu_total", gpu_mib, f"NVML: the llama-server process held {gpu_mib:,.0f} MiB", prov,
                           device=prov.device)),
            Row("app", cal("cuda_context", gpu_mib - on_gpu, f"NVML {gpu_mib:,.0f} MiB minus the {on_gpu:,.1f} MiB "
                           "of buffers llama.cpp reported on the GPU", prov, device=prov.device))]


def _with(r: Any, rows: list[Any]) -> Any:
    from generator.fit import with_rows

    app_rows = [row.row for row in rows if row.target == "app"]
    model_rows = [row.row for row in rows if row.target == "model"]
    return replace(r, app=r.app.model_copy(update={"calibration": with_rows(r.app.calibration, app_rows)}),
                   model=r.model.model_copy(update={"calibration": with_rows(r.model.calibration, model_rows)}))


def _summary(r: Any) -> dict[str, Any]:
    from generator.fit import largest_context
    from generator.fit.estimate import estimate
    from generator.fit import sized

    r = sized(r)  # an app that leaves gpu_memory_mib out: the cap the fit gives it (with these rows)
    fit = estimate(r)
    return {"summary": fit.summary(), "verdict": fit.verdict, "largest_context": largest_context(r),
            "parts": [(p.component, round(p.mib, 1)) for p in fit.parts]}


def _write(cat: Any, r: Any, rows: list[Any]) -> list[str]:
    from generator.fit import with_rows

    done: list[str] = []
    for target, path, existing in (("app", cat.file_of(r.app.name), r.app.calibration),
                                   ("model", cat.root / "models" / f"{r.model.id}.yaml", r.model.calibration)):
        new = [row.row for row in rows if row.target == target]
        if new:
            write_calibration(path, with_rows(existing, new))
            done.append(str(path))
    return done


def write_calibration(path: Path, rows: tuple[Any, ...]) -> None:
    """Replace the `calibration:` block of a catalog file (or append one); every other line stays as it was."""
    from ruamel.yaml import YAML

    from generator.core import atomic_write_text
    from generator.yamlio import yamlout

    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    doc = YAML(typ="rt").load(text)
    dumped = [row.model_dump(exclude_none=True) for row in rows]
    body = yamlout.dump(dumped)
    block = ["".join("  " + line if line.strip() else line for line in body.splitlines(keepends=True))]
    if "calibration" in doc:
        keys = list(doc)
        start = doc.lc.key("calibration")[0]
        index = keys.index("calibration")
        end = doc.lc.key(keys[index + 1])[0] if index + 1 < len(keys) else len(lines)
        while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
            end -= 1  # a comment above the next key stays with it
        head = lines[start]
        key_line = head if head.rstrip().endswith(":") or "#" in head.split(":", 1)[1][:3] else "calibration:\n"
        if "calibration: [" in head or "calibration: []" in head:
            key_line = "calibration:\n"
        lines[start:end] = [key_line] + block
    else:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        lines += ["calibration:\n"] + block
    new_text = "".join(lines)
    check = yamlout.load(new_text)
    if check.get("calibration") != yamlout.load(yamlout.dump({"calibration": dumped}))["calibration"]:
        raise CatalogError(f"{path}: the calibration block did not round-trip; nothing was written")
    atomic_write_text(path, new_text)


def _report(name: str, rows: list[Any], skipped: list[Any], before: dict[str, Any], after: dict[str, Any],
            written: list[str], as_json: bool) -> None:
    if as_json:
        out = {"app": name, "rows": [{"target": x.target, **x.row.model_dump(mode="json", exclude_none=True)}
                                     for x in rows],
               "skipped": [x.row.model_dump(mode="json", exclude_none=True) for x in skipped],
               "before": before, "after": after, "written": written}
        sys.stdout.write(json.dumps(out, indent=1) + "\n")
        return
    lines = [f"{name}: {len(rows)} calibration row(s) from the log"]
    for x in rows:
        value = f"{x.row.value_gib} GiB" if x.row.value_gib is not None else f"{x.row.value_mib} MiB"
        extra = f" @ {x.row.context:,} tokens" if x.row.context else ""
        lines.append(f"  {x.target:5s} {x.row.measure:16s} {value:>14s}{extra}  {x.row.what}")
    lines += [f"  skipped: {x.row.measure} {x.row.what} (a real-shape file's weights are not the real file's)"
              for x in skipped]
    lines.append(f"before: {before['summary']}; largest context {before['largest_context']:,} tokens")
    lines.append(f"after:  {after['summary']}; largest context {after['largest_context']:,} tokens")
    lines.append("written: " + ", ".join(written) if written else "nothing written (--write keeps the rows)")
    # the rows quote the log and --note/--source/--device: shown escaped and redacted, one line each
    sys.stdout.writelines(safe_line(redact(line)) + "\n" for line in lines)
