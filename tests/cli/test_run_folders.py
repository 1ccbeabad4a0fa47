"""collocnode._cli.output: where a run writes. Units go straight into the marked, locked run
folder; only the summary is staged; --overwrite replaces only a run folder, and only with a run
that succeeded; folders of killed runs are adopted or moved into view, never left silently;
nothing is deleted that the program did not write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collocnode._cli.output import OutputDirectory, resume_command
from collocnode._cli.run_folder import MARKER, FolderInUse, RunFolder, is_run_folder


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def finished_run(target: Path, run_id: str = "aaaa") -> Path:
    """A run folder as a finished run leaves it: marker, a stored unit, a summary."""
    out = OutputDirectory(target, run_id, command="python scripts/x.py")
    (out.folder / "seeds").mkdir()
    (out.folder / "seeds" / "seed-0.json").write_text('{"done": true}')
    (out.path / "result.json").write_text(json.dumps({"run_id": run_id}))
    assert out.finish() == target
    return target


def test_a_new_run_marks_its_folder_and_moves_its_summary_in_at_the_end(tmp_path):
    target = tmp_path / "runs" / "new"
    out = OutputDirectory(target, "r1", command="python scripts/train_collocation.py vdp")
    assert out.folder == target and out.path == target / ".staging-r1"
    marker = json.loads((target / MARKER).read_text())
    assert marker["run_id"] == "r1" and marker["command"].endswith("vdp")
    with pytest.raises(FolderInUse, match="in use by another running command"):
        RunFolder.hold(target)  # locked while the run runs
    (out.path / "result.json").write_text("{}")
    (out.path / "plots").mkdir()
    (out.path / "plots" / "a.png").write_bytes(b"png")
    assert out.finish() == target
    assert sorted(files(target)) == [MARKER, "plots/a.png", "result.json"]
    RunFolder.hold(target).release()  # released at the end


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_folder_collocnode_did_not_write_is_refused_and_untouched(tmp_path, overwrite):
    target = tmp_path / "thesis"
    target.mkdir()
    (target / "thesis.tex").write_text("\\documentclass{article}")
    (target / "notes.txt").write_text("notes")
    before = files(target)
    with pytest.raises(ValueError, match="--overwrite replaces only a folder written by") as err:
        OutputDirectory(target, "r1", overwrite=overwrite)
    assert files(target) == before and sorted(p.name for p in tmp_path.iterdir()) == ["thesis"]
    if overwrite:
        assert "holds notes.txt, thesis.tex" in str(err.value)


def test_an_earlier_run_is_refused_without_resume_or_overwrite(tmp_path):
    target = finished_run(tmp_path / "run")
    with pytest.raises(ValueError, match="holds an earlier run; pass --resume to continue it"):
        OutputDirectory(target, "r2")


@pytest.mark.parametrize("success", [True, False])
def test_overwrite_replaces_the_earlier_run_only_when_the_new_one_succeeds(tmp_path, success):
    target = finished_run(tmp_path / "run")
    earlier = files(target)
    out = OutputDirectory(target, "bbbb", overwrite=True)
    assert out.folder == tmp_path / ".run.bbbb.partial" and is_run_folder(out.folder)
    assert files(target) == earlier  # untouched while the new run runs
    with pytest.raises(FolderInUse):
        RunFolder.hold(target)  # and held: no --resume of it meanwhile
    (out.path / "result.json").write_text(json.dumps({"run_id": "bbbb"}))
    where = out.finish(success=success)
    if success:
        assert where == target and out.ending == ""
        assert json.loads((target / "result.json").read_text()) == {"run_id": "bbbb"}
        assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    else:
        assert where == tmp_path / "run-bbbb"
        assert out.ending == f"the earlier run stays in {target}"
        assert files(target) == earlier
        assert json.loads((where / "result.json").read_text()) == {"run_id": "bbbb"}
        assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "run-bbbb"]


def test_resume_continues_in_place_and_takes_what_a_killed_run_staged(tmp_path):
    target = finished_run(tmp_path / "run")
    # what kill -9 leaves: a staged summary, a temporary file of a write cut short
    (target / ".staging-cccc").mkdir()
    (target / ".staging-cccc" / "result.json").write_text('{"run_id": "cccc"}')
    (target / "seeds" / ".seed-1.json.x1y2.tmp").write_text('{"do')
    out = OutputDirectory(target, "dddd", resume=True)
    assert out.folder == target
    staged = f"moved the summary a killed run had staged in .staging-cccc into {target}"
    assert out.notes == [staged]
    assert json.loads((target / "result.json").read_text()) == {"run_id": "cccc"}
    assert sorted(p.name for p in (target / "seeds").iterdir()) == ["seed-0.json"]
    out.finish()


def test_resume_adopts_the_folder_of_a_killed_run_that_staged_everything(tmp_path):
    """A run of a version that staged whole runs beside --out, killed with 2 seeds done."""
    orphan = tmp_path / ".run.eeee.partial"
    (orphan / "seeds").mkdir(parents=True)
    (orphan / "seeds" / "seed-0.json").write_text("{}")
    (orphan / "seeds" / "seed-1.json").write_text("{}")
    target = tmp_path / "run"
    out = OutputDirectory(target, "ffff", resume=True)
    assert out.folder == target and is_run_folder(target)
    assert sorted(p.name for p in (target / "seeds").iterdir()) == ["seed-0.json", "seed-1.json"]
    assert out.notes == [
        f"--resume: adopted .run.eeee.partial, the folder of a run that was killed before it "
        f"ended, as {target}"
    ]
    out.finish()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_a_killed_runs_folder_beside_out_is_moved_into_view(tmp_path):
    target = finished_run(tmp_path / "run")
    killed = OutputDirectory(target, "gggg", overwrite=True)  # an overwrite run, then kill -9
    killed._release()  # what the kernel does to a killed process's lock
    out = OutputDirectory(tmp_path / "other", "hhhh")
    assert out.notes == []  # another --out: not its business
    out.finish()
    out = OutputDirectory(target, "iiii", resume=True)
    assert out.notes == [
        f"found .run.gggg.partial, the folder of a run that was killed before it ended; moved "
        f"it to {tmp_path / 'run-gggg'} (continue it with --resume --out {tmp_path / 'run-gggg'})"
    ]
    assert is_run_folder(tmp_path / "run-gggg")
    out.finish()


def test_the_folder_of_a_run_that_is_still_going_is_left_alone(tmp_path):
    target = finished_run(tmp_path / "run")
    running = OutputDirectory(target, "jjjj", overwrite=True)
    with pytest.raises(FolderInUse):
        OutputDirectory(target, "kkkk", resume=True)
    other = OutputDirectory(tmp_path / "run2", "llll")
    other.finish()
    assert running.folder.is_dir()
    running.finish(success=True)


def test_discard_leaves_everything_as_it_was(tmp_path):
    target = tmp_path / "new"
    OutputDirectory(target, "r1").discard()
    assert not target.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    OutputDirectory(empty, "r2").discard()
    assert list(empty.iterdir()) == []
    earlier = files(finished_run(tmp_path / "run"))
    OutputDirectory(tmp_path / "run", "r3", resume=True).discard()
    assert files(tmp_path / "run") == earlier
    RunFolder.hold(tmp_path / "run").release()


def test_the_resume_command_continues_where_the_files_are():
    argv = ["vdp", "--seeds", "6", "--out", "runs/a", "--overwrite", "--noise", "0.1"]
    assert resume_command("scripts/train_collocation.py", argv, Path("runs/a-x1")) == (
        "python scripts/train_collocation.py vdp --seeds 6 --noise 0.1 --out runs/a-x1 --resume"
    )
