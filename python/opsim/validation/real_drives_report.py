"""``opsim validate --suite real-drives``: the table and the JSON document of
:mod:`.real_drives` (docs/validation.md, "Real drives")."""

from __future__ import annotations

from collections.abc import Callable

from .._output import Output, atomic_write_text, table
from ..stopsignals import interrupt_exit_code
from . import real_drives as rd


def document(cases: list[rd.Case], rows: list[dict], interrupted: bool) -> dict:
    return {
        "suite": "real-drives",
        "data": str(rd.DATA),
        "ratio_interval": rd.RATIO_INTERVAL,
        "cases": [
            {
                "id": c.id,
                "drive": c.title,
                "input": c.input,
                "who_measured": c.who_measured,
                "document": c.document,
                "datasheet": c.datasheet,
                "datasheet_sources": c.datasheet_sources,
                "figures": [
                    {
                        "id": m.id,
                        "what": m.what,
                        "value": m.value,
                        "reading": m.reading,
                        "reading_uncertainty": m.reading_uncertainty,
                        "source": m.source,
                    }
                    for m in c.figures.values()
                ],
                "fits": [
                    {
                        "name": f.name,
                        "datasheet": f.datasheet,
                        "nand": f.nand,
                        "points": list(f.points),
                        "predict": list(f.predict),
                    }
                    for f in c.fits
                ],
            }
            for c in cases
        ],
        "rows": rows,
        "summary": rd.summary(rows),
        "interrupted": interrupted,
    }


def real_drives_output(
    case_ids: list[str] | None, markdown_file: str | None, say: Callable[[str], None] | None = None
) -> Output:
    """Run the suite (the cases ``case_ids``, all when None); progress lines go to ``say``.  On
    Ctrl-C (or SIGTERM) the rows done so far are kept and the exit code says it was stopped."""
    cases = rd.select(rd.load(), case_ids)

    def progress(i: int, n: int, case, fit) -> None:
        if say and case is not None:
            say(f"real-drives [{i + 1}/{n}] {case.id}: calibrating from {_fitted_words(fit)}")

    rows: list[dict] = []
    exit_code = 0
    try:
        rd.run(cases, progress, rows_out=rows)
    except KeyboardInterrupt as e:
        exit_code = interrupt_exit_code(e)
    doc = document(cases, rows, bool(exit_code))
    if markdown_file and not exit_code:
        lines = rd.summary_lines(doc["summary"])
        atomic_write_text(markdown_file, rd.markdown(rows) + "\n\n" + "".join(f"- {x}\n" for x in lines))
    text = table(
        rd.HEADERS,
        rd.cells(rows),
        title="Real drives: published figures, each predicted by opsim calibrate from figures that exclude it",
        align="lllrrrrl",
    )
    text += "\n\n" + "\n".join(rd.summary_lines(doc["summary"]))
    text += f"\nA ratio's interval is {rd.RATIO_INTERVAL}. Sources: {rd.DATA}"
    if exit_code:
        text += f"\ninterrupted: {len(rows)} rows done"
    return Output(data=doc, text=text, exit_code=exit_code)


def _fitted_words(fit: rd.Fit) -> str:
    parts = (["the datasheet"] if fit.datasheet else []) + list(fit.points)
    return ", ".join(parts)
