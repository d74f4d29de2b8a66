//! The demo journal's small vault: about sixty markdown notes that read like one person's, beside the
//! sample transcripts of `demo`, so the notes tools, search and the access rules have something real to
//! work on in `journal demo`, `journal serve --demo` and tests.
//!
//! The vault is fixed text with `@{N}` standing for the day `N` days before the demo's last day (a
//! negative `N` is after it), so the same `end` always writes the same files and dates stay recent
//! whenever the demo is made. It holds one example of each thing the notes code must get right: ids and
//! titles present or missing, a single-string `tags`, facets, `access` and `agent_overrides`, links of
//! every shape, a fenced code block whose `#tag` and link are not real, non-ASCII text, `AGENTS.md`
//! files, skills, and the quarantined places agents must never see.
//!
//! This module only writes files. It does not index them, and it does not enforce anything: the
//! constants below say where the traps are so tests can check that the rest of the journal does.

use std::path::Path;

use crate::journal::day::Day;

/// The note whose frontmatter says `access: read-only`.
pub const READ_ONLY_NOTE: &str = "Projects/Atlas/decision-log.md";
/// The note whose frontmatter says `access: private`: agents must find it exactly as if it were missing.
pub const PRIVATE_NOTE: &str = "Areas/surprise-trip.md";
/// A word in the private note's title and body and in no other file of the demo.
pub const PRIVATE_WORD: &str = "zanzibar-escrow";
/// The note with `agent_overrides` that denies one connection.
pub const OVERRIDDEN_NOTE: &str = "Projects/Bindery/pricing.md";
/// The connection label the overridden note names, with `no-access`.
pub const OVERRIDDEN_FOR: &str = "Claude Code";
/// A word in the overridden note's body and in no other file of the demo.
pub const OVERRIDDEN_WORD: &str = "marzipan-ledger";
/// A word in every quarantined file and in no other file of the demo.
pub const QUARANTINED_WORD: &str = "quokka-lighthouse";
/// The files agents must never reach: a `_private/` folder, dot-folders and `Widgets/`.
pub const QUARANTINED_FILES: [&str; 5] = [
    "_private/diary.md",
    ".obsidian/app.json",
    ".obsidian/workspace.md",
    "Widgets/tasks.md",
    ".trash/old.md",
];
/// The owner's instructions for agents: one for the whole vault and one for `Projects/`.
pub const AGENTS_FILES: [&str; 2] = ["AGENTS.md", "Projects/AGENTS.md"];
/// The owner's skills for agents.
pub const SKILL_FILES: [&str; 2] = ["Skills/weekly-review/SKILL.md", "Skills/meeting-notes/SKILL.md"];
/// The reachable `.md` files written: every file but the quarantined ones, counting `AGENTS.md` files,
/// skills, and the private and overridden notes.
pub const NOTE_COUNT: usize = 60;

/// Writes the vault into `vault` (created by the caller); returns the number of files written.
pub fn write(vault: &Path, end: Day) -> std::io::Result<usize> {
    let mut written = 0;
    for source in NOTES.into_iter().chain([QUARANTINED]) {
        for (path, text) in files(source) {
            let path = vault.join(fill(path, end));
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            // Sample files are not worth a flush each, as in `demo`: a crash means writing the demo again.
            crate::fsio::write_unflushed(&path, fill(&text, end).as_bytes())?;
            written += 1;
        }
    }
    Ok(written)
}

/// The paths of the reachable notes whose frontmatter names `facet` (the private and overridden notes
/// included: hiding them is the access rules' job).
pub fn notes_in_facet(facet: &str) -> Vec<&'static str> {
    NOTES
        .into_iter()
        .flat_map(files)
        .filter(|(_, text)| facets_of(text).any(|named| named == facet))
        .map(|(path, _)| path)
        .collect()
}

/// The files of a source table: each starts at a line `=== path` and runs to the next such line.
/// Every file ends with exactly one newline.
fn files(source: &'static str) -> impl Iterator<Item = (&'static str, String)> {
    source.split("\n=== ").skip(1).map(|chunk| {
        let (path, text) = chunk.split_once('\n').unwrap_or((chunk, ""));
        (path.trim(), format!("{}\n", text.trim_end()))
    })
}

/// The facets a note's frontmatter names on its `facets: [a, b]` line (the only form the tables use).
fn facets_of(text: &str) -> impl Iterator<Item = &str> {
    let front = text
        .strip_prefix("---\n")
        .and_then(|rest| rest.split_once("\n---\n"))
        .map_or("", |(front, _)| front);
    front
        .lines()
        .filter_map(|line| line.strip_prefix("facets:"))
        .flat_map(|list| list.trim().trim_start_matches('[').trim_end_matches(']').split(','))
        .map(str::trim)
        .filter(|facet| !facet.is_empty())
}

/// Replaces every `@{N}` with the day `N` days before `end`; anything else is left as written.
fn fill(text: &str, end: Day) -> String {
    let mut filled = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((before, after)) = rest.split_once("@{") {
        filled.push_str(before);
        let number = after
            .split_once('}')
            .and_then(|(n, tail)| Some((n.parse::<i64>().ok()?, tail)));
        match number {
            Some((days, tail)) => {
                filled.push_str(&end.minus_days(days).to_string());
                rest = tail;
            }
            None => {
                filled.push_str("@{");
                rest = after;
            }
        }
    }
    filled.push_str(rest);
    filled
}

/// The reachable notes, a table per folder. A table is a run of files, each starting at a line
/// `=== path` (no note has such a line), so a note reads in the source as it will in the vault.
const NOTES: [&str; 8] = [TOP, PROJECTS, MEETINGS, PEOPLE, READING, DAILY, AREAS, SKILLS];

const TOP: &str = r#"
=== AGENTS.md
# How to write in this vault

These notes are mine; agents help keep them tidy. When you write here:

- Plain British English, short paragraphs, no marketing tone.
- Dates are YYYY-MM-DD, in frontmatter and in text.
- Every new note gets `created`; tasks and projects also get `status` (todo, active, done or someday).
- Link people and projects by their note name in double brackets, e.g. [[ada-okafor]] or [[Atlas]].
- Meeting notes go in Meetings/ and follow the meeting-notes skill.
- Never rewrite a daily note older than a week: append instead.
- Ask before deleting anything.
=== Home.md
---
id: home
tags: [index]
created: @{400}
---

# Home

Start here. 🌱

## Work
- [[Atlas|Project Atlas]]: the warehouse migration at Northwind, see [[Atlas#Milestones]].
- [[one-on-one-ada]] and [[quarterly-planning]].

## Family
- [[family-life]] · [[school]] · [[kitchen-renovation]]

## Health
- [[health]], the [[half-marathon]] and the [[running-log]].

## Side project
- The [[Bindery]] with [[Tomás Ruiz]].

## Elsewhere
- [[reading-list]], [[Ideas]], [[Inbox]], [[Quotes]], [[Weekly reviews]]
=== Inbox.md
- call the landlord about the heater
- look up linen thread prices for [[suppliers]]
- book the next session with [[Dr. Lindqvist]]
- a #someday shelf for the hallway
- 10:30 dentist for Maya on Thursday
=== Ideas.md
---
status: someday
tags: [ideas]
---

# Ideas

- A reading nook in the box room. #home
- Sell bookbinding kits for beginners through the [[Bindery]].
- Run the half in under two hours: [[half-marathon]].
=== Quotes.md
---
tags: [quotes]
created: @{300}
---

# Quotes

> Die Grenzen meiner Sprache bedeuten die Grenzen meiner Welt. (Wittgenstein)

> 七転び八起き: fall seven times, stand up eight.

> « Le cœur a ses raisons que la raison ne connaît point. » (Pascal)
"#;

const PROJECTS: &str = r#"
=== Projects/AGENTS.md
# Projects: notes for agents

- Each project has a folder and an overview note named after it ([[Atlas]], [[Bindery]]) with `status`,
  `priority` (1 is the highest) and `due`.
- Tasks are notes with `status: todo` and a `due` date. Mark them done; don't delete them.
- The Atlas decision log is read-only for you: propose a change in a new note instead.
- Keep prices and money out of anything shared with work.
=== Projects/Atlas/Atlas.md
---
id: 3f6c1e2a-8b4d-4c7e-9a15-2d7e0b6f4a91
title: Project Atlas
status: active
priority: 1
due: @{-45}
created: @{120}
tags: [atlas, warehouse]
facets: [work]
---
# Atlas

Moving Northwind's reporting to the new warehouse. Sponsor: [[Ada Okafor]]; pipeline: [[priya-raman|Priya]].

## Milestones
1. Dashboards rebuilt on the warehouse: [[dashboards]] (done)
2. Alerting on the new jobs: [[alerting-runbook]]
3. The cutover weekend: [[warehouse-cutover]]

## Risks
- The ingestion backlog (see [[ingestion-review]]).
- Access to the warehouse for the finance team. #blocked

Decisions are in the [[decision-log]].
=== Projects/Atlas/decision-log.md
---
id: atlas-decisions
title: Atlas decision log
access: read-only
created: @{120}
tags: [atlas, decisions]
facets: [work]
---
# Atlas decision log

## One warehouse, not two
Decided @{110}: a single warehouse for reporting and analytics. Agreed with [[Ada Okafor]].

## Cutover on a weekend
Decided @{60}: cut over on a Saturday morning; the old reports stay read-only for a month.
=== Projects/Atlas/warehouse-cutover.md
---
status: todo
priority: 1
due: @{-14}
created: @{30}
tags: [atlas]
facets: [work]
---
# Warehouse cutover

- [ ] Freeze the old report definitions
- [ ] Dry run with [[Priya Raman]] on the staging warehouse
- [ ] Tell finance the date, see [[Atlas#Risks]]
=== Projects/Atlas/dashboards.md
---
status: done
priority: 2
due: @{20}
created: @{80}
tags: [atlas, dashboards]
facets: [work]
---
# Dashboards on the warehouse

All twelve finance dashboards now read from the warehouse. The weekly revenue one needed a summary table.
=== Projects/Atlas/alerting-runbook.md
---
id: atlas-alerting
status: active
priority: 2
created: @{40}
tags: [atlas, runbook]
facets: [work]
---
# Alerting runbook

When a warehouse load job fails twice in a row, the on-call person is paged.

## Checking a failed load

```sql
-- #not-a-tag: comments in code are not tags, and [[not-a-link]] is not a link
SELECT job, status FROM loads WHERE status = 'failed';
```

Then tell [[Priya Raman]] in the #ingestion channel.
=== Projects/Atlas/retro.md
---
created: @{5}
tags: [atlas, retro]
facets: [work]
---
# Atlas retro, part one

## What went well
- The [[dashboards]] landed early.

## What to change
- Fewer meetings: the [[atlas-kickoff]] ran over by an hour.
=== Projects/Bindery/Bindery.md
---
id: bindery
title: The bindery
status: active
priority: 2
created: @{200}
tags: [bindery, books]
facets: [side-project]
---
# Bindery

A small bookbinding shop with [[Tomás Ruiz]]: hand-sewn notebooks, guest books and repairs. 製本 (seihon)
is the word on our stamp.

- Prices: [[pricing]]
- Thread and board: [[suppliers]]
- Next: the [[spring-collection]] and the [[market-stall]]
=== Projects/Bindery/pricing.md
---
title: Bindery pricing
agent_overrides: {"Claude Code": no-access}
created: @{50}
tags: [bindery, money]
facets: [side-project]
---
# Pricing

Costs per notebook are in the marzipan-ledger sheet; keep the margin above 40 %.

| item | price |
|---|---|
| A5 notebook | 28 |
| guest book | 45 |
=== Projects/Bindery/suppliers.md
---
created: @{150}
tags: [bindery]
facets: [side-project]
---
# Suppliers

- Linen thread: the mill in Leeds, cheaper since @{20}.
- Board: offcuts from the framer on Mill Lane.
- Leather: none yet; [[Tomás Ruiz|Tomás]] wants to try vegetable-tanned.
=== Projects/Bindery/spring-collection.md
---
status: todo
priority: 3
due: @{-60}
created: @{25}
tags: [bindery, design]
facets: [side-project]
---
# Spring collection

Coptic-stitch notebooks in three colours. Photos for the shop page first. #photos
=== Projects/Bindery/market-stall.md
---
status: someday
created: @{35}
tags: [bindery, market]
facets: [side-project, family]
---
# Market stall

Forty a day for a pitch at the Saturday market. [[maya|Maya]] wants to run the till.
=== Projects/kitchen-renovation.md
---
status: someday
priority: 4
created: @{300}
tags: [home]
facets: [family]
---
# Kitchen renovation

Quotes from two builders, both too high. Revisit after the lease renewal: [[landlord-call]].
=== Projects/half-marathon.md
---
id: 9c1d4e77-2b3a-4f0e-8d6c-51a9e3b7c204
status: active
priority: 2
due: @{-70}
created: @{90}
tags: [running, goals]
facets: [health]
---
# Half marathon

The plan from [[Dr. Lindqvist]]: three runs a week, the long one on Sundays in Riverside Park. Progress is
in the [[running-log]].
=== Projects/home-server.md
---
status: someday
created: @{250}
tags: [tech]
---
# Home server

A small box in the hallway cupboard to back up the notes every night:

```sh
# back up the vault (a shell comment, not a heading)
rsync -a ~/vault/ /mnt/backup/vault/
```
"#;

const MEETINGS: &str = r#"
=== Meetings/atlas-kickoff.md
---
created: @{100}
attendees: [ada-okafor, priya-raman]
tags: [meeting, atlas]
facets: [work]
---
# Atlas kickoff

## Attendees
[[Ada Okafor]], [[Priya Raman]] and me.

## Decisions
- One warehouse (logged in the [[decision-log]]).

## Actions
- [ ] Priya: list the ingestion jobs (due @{90})
=== Meetings/one-on-one-ada.md
---
id: 1on1-ada
title: One-on-one with Ada
created: @{7}
attendees: [ada-okafor]
tags: [meeting, 1on1]
facets: [work]
---
# 1:1 with Ada

Notes from the fortnightly one-on-one with [Ada](../People/ada-okafor.md).

- Career: the staff engineer path, see [[career]].
- Atlas: she wants the cutover date by Monday ([[warehouse-cutover]]).
- I asked for Friday afternoons without meetings.
=== Meetings/quarterly-planning.md
---
created: @{20}
tags: [meeting, planning]
facets: [work]
---
# Quarterly planning

Three open questions: headcount, the warehouse budget, and whether [[Atlas]] slips.

- [ ] Write the budget note before the review
=== Meetings/ingestion-review.md
---
status: done
created: @{12}
attendees: [priya-raman]
tags: [meeting, atlas]
facets: [work]
---
# Ingestion review

[[Priya Raman]] thinks the backlog is a tooling problem, not a staffing one. We agreed to try batching.

## Actions
- [x] Priya: batch the small loads
=== Meetings/parents-evening.md
---
created: @{15}
attendees: [sam]
tags: [school, meeting]
facets: [family]
---
# Parents' evening

Maya's teacher says her reading is well ahead; maths needs practice. See [[school]].

- [ ] Times tables, ten minutes a day
=== Meetings/physio-check-in.md
---
created: @{10}
tags: [knee, meeting]
facets: [health]
---
# Physio check-in

[[Dr. Lindqvist]] says the knee is better. Keep the exercises twice a day; next appointment on @{-4}.
=== Meetings/bindery-sync-tomas.md
---
created: @{3}
attendees: [tomas-ruiz]
tags: [bindery, meeting]
facets: [side-project]
---
# Bindery sync

With [[Tomás Ruiz]]. Next steps for the [[spring-collection]]; the café wants thirty guest books by June.
¡Vamos!
=== Meetings/landlord-call.md
---
created: @{18}
tags: [home]
facets: [family]
---
# Call with the landlord

The lease renewal: two years, rent up 3 %. The heater is replaced next month. See [[finances]].
=== Meetings/doctor-appointment.md
---
status: todo
due: @{-10}
created: @{40}
tags: [health]
facets: [health]
---
# Annual check-up

Blood test before the appointment; no food after eight the night before.
"#;

const PEOPLE: &str = r#"
=== People/ada-okafor.md
---
id: person-ada
title: Ada Okafor
tags: [person]
facets: [work]
---
# Ada Okafor

Leads the data platform team at Northwind; my manager. Prefers written proposals. See [[one-on-one-ada]].
=== People/priya-raman.md
---
title: Priya Raman
tags: [person]
facets: [work]
---
Staff engineer who owns the ingestion pipeline and knows every load job by name. Works on [[Atlas]].
=== People/maya.md
---
tags: [person, family]
facets: [family]
---
# Maya

My daughter, in year four at Elm Street School. Loves the library and pancakes. See [[school]].
=== People/sam.md
---
tags: [person, family]
facets: [family]
---
# Sam

My partner. Does the school runs on Tuesdays and Thursdays.
=== People/dr-lindqvist.md
---
title: Dr. Lindqvist
tags: [person]
facets: [health]
---
Physiotherapist treating my knee; the clinic is open on Tuesdays from nine. See [[physio-check-in]].
=== People/tomas-ruiz.md
---
id: person-tomas
title: Tomás Ruiz
tags: [person]
facets: [side-project]
---
# Tomás Ruiz

Co-founder of the [[Bindery]]. Learnt bookbinding in Granada and says «sin prisa» a lot.
=== People/grandma.md
# Grandma

Visits on Sundays; [[sam|Sam]] picks her up at the station. Birthday in March. 🎂
"#;

const READING: &str = r#"
=== Reading/Designing Data-Intensive Applications.md
---
title: Designing Data-Intensive Applications
status: active
created: @{60}
tags: [reading, books, databases]
facets: [work]
---
# Designing Data-Intensive Applications

Chapter 3 on storage engines explains the warehouse's column store better than the vendor's manual. Useful
for [[Atlas]]. #databases
=== Reading/The Art of Bookbinding.md
---
status: done
created: @{180}
tags: [reading, books]
facets: [side-project]
---
# The Art of Bookbinding

Old but thorough on sewing frames. Lent to [[Tomás Ruiz|Tomás]].
=== Reading/Born to Run.md
---
status: todo
tags: [reading, books, running]
facets: [health]
---
# Born to Run

Recommended by [[Dr. Lindqvist]], of all people.
=== Reading/reading-list.md
---
id: reading-list
tags: [reading]
---
# Reading list

- [[Designing Data-Intensive Applications]] (reading)
- [[The Art of Bookbinding]] (done)
- [[Born to Run]] (next)
- [[essay-on-notes]] and [[sourdough-basics]]
=== Reading/sourdough-basics.md
---
tags: recipe
created: @{220}
---
# Sourdough basics

- 500 g flour, 350 g water, 100 g starter, 10 g salt
- Stretch and fold four times, then overnight in the fridge
=== Reading/essay-on-notes.md
## Part one

Notes are for thinking, not storage. Write the note you would want to find in a year.

## Part two

Link generously: [[Home]] is only a start.
"#;

const DAILY: &str = r#"
=== Daily/@{0}.md
---
created: @{0}
tags: [daily]
---
# @{0}

- Morning run in Riverside Park, 5 km. #running
- Cutover date agreed: [[warehouse-cutover]].
- Yesterday: [[@{1}]]
=== Daily/@{1}.md
---
created: @{1}
tags: [daily]
---
# @{1}

- [[bindery-sync-tomas|Sync with Tomás]] in the evening.
- Maya lost a tooth. 🦷
=== Daily/@{2}.md
# @{2}

- Slept badly. #sleep
- Read chapter 3 of [[Designing Data-Intensive Applications]].
=== Daily/@{3}.md
---
created: @{3}
---
# @{3}

- Weekly review written: [[weekly-reviews#Week ending @{3}]]
- Long run, 8 km of hills. #running
=== Daily/@{4}.md
# @{4}

- Physio exercises twice. #knee
- Shopping list is in the [[Inbox]].
=== Daily/@{6}.md
---
created: @{6}
tags: [daily]
---
# @{6}

- Read through the [[quarterly-planning]] doc.
=== Daily/@{7}.md
# @{7}

- [[one-on-one-ada]] went well.
- Long run, 14 km. #running
=== Daily/@{9}.md
# @{9}

- A quiet day. Sorted the boxes in the hallway with [[sam|Sam]].
"#;

const AREAS: &str = r#"
=== Areas/health.md
---
id: area-health
title: Health
tags: [area]
facets: [health]
---
# Health

- Knee: [[physio-check-in]], exercises twice a day
- Running: [[half-marathon]] and the [[running-log]]
- Check-up: [[doctor-appointment]]
- Sleep: no screens after ten. #sleep
=== Areas/finances.md
---
tags: [area, money]
---
# Finances

- Rent goes up 3 % with the lease renewal ([[landlord-call]]).
- The bindery has paid for itself since @{30}; details in [[Bindery]].
=== Areas/family-life.md
---
title: Home and family
tags: [area]
facets: [family]
---
# Family life

- The flat: [[kitchen-renovation]], [[landlord-call]]
- [[maya|Maya]] and [[school]]
- [[grandma|Grandma]] visits on Sundays
=== Areas/career.md
---
status: active
tags: [area, work]
facets: [work]
---
# Career

Aiming for staff engineer within a year. Evidence so far: [[Atlas]], [[dashboards]]. Talk it through in
[[one-on-one-ada]].
=== Areas/surprise-trip.md
---
title: Surprise trip (zanzibar-escrow)
access: private
created: @{8}
tags: [travel]
facets: [family]
---
# Surprise trip

Sam doesn't know yet. The zanzibar-escrow deposit is due at the end of the month; flights in the spring
holidays.
=== Areas/running-log.md
---
tags: [running, log]
facets: [health]
---
# Running log

| day | km | notes |
|---|---|---|
| @{0} | 5 | easy |
| @{3} | 8 | hills |
| @{7} | 14 | long run |
=== Areas/school.md
---
tags: [area, school]
facets: [family]
---
# Elm Street School

Maya is in year four. Trip forms go to the office by Friday. Last: [[parents-evening]].
=== Areas/weekly-reviews.md
---
title: Weekly reviews
created: @{60}
tags: [review]
facets: [work, family]
---
# Weekly reviews

## Week ending @{3}

### Done
- [[dashboards]]

### Stuck
- Warehouse access for finance

### Next
- [[warehouse-cutover]]

## Week ending @{10}

A quiet week; [[parents-evening]].
"#;

const SKILLS: &str = r#"
=== Skills/weekly-review/SKILL.md
---
name: weekly-review
description: On Fridays, review the week's daily notes and projects and add a summary to the weekly reviews.
---

# Weekly review

1. Read the daily notes in Daily/ from the last seven days.
2. List what moved in each active project (`status: active`), and anything overdue (`due` before today).
3. Note open questions for [[one-on-one-ada|the next one-on-one]].
4. Append a section "Week ending YYYY-MM-DD" to [[weekly-reviews]] with three headings: Done, Stuck, Next.
5. Don't change a task's status yourself: suggest it.
=== Skills/meeting-notes/SKILL.md
---
name: meeting-notes
description: Turn a meeting transcript or rough notes into a note in Meetings/ with attendees, decisions and actions.
---

# Meeting notes

- File name: a short slug such as atlas-kickoff.md; frontmatter `created`, `attendees` (note names) and `facets`.
- Sections, in order: Attendees, Decisions, Actions.
- One line per action: `- [ ] who: what (due YYYY-MM-DD)`.
- Link every attendee to their note in People/, as in [[atlas-kickoff]].
"#;

/// Files agents must never see, each holding [`QUARANTINED_WORD`].
const QUARANTINED: &str = r#"
=== _private/diary.md
# Diary

Things I only tell this file, under the quokka-lighthouse. [[sam|Sam]] would laugh.
=== .obsidian/app.json
{
  "promptDelete": false,
  "newFileLocation": "folder",
  "userIgnoreFilters": ["quokka-lighthouse/"]
}
=== .obsidian/workspace.md
# Workspace

Last layout: the quokka-lighthouse split.
=== Widgets/tasks.md
# Tasks widget

- [ ] quokka-lighthouse widget state
=== .trash/old.md
# Old note

A deleted draft about the quokka-lighthouse.
"#;

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::PathBuf;

    use super::*;

    fn end() -> Day {
        Day::parse("2026-11-30").unwrap()
    }

    /// Every file of a freshly written vault: path (with `/`) to text.
    fn written() -> (BTreeMap<String, String>, usize) {
        let dir = tempfile::tempdir().unwrap();
        let count = write(dir.path(), end()).unwrap();
        let mut files = BTreeMap::new();
        let mut pending: Vec<PathBuf> = vec![dir.path().to_path_buf()];
        while let Some(folder) = pending.pop() {
            for entry in std::fs::read_dir(&folder).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    pending.push(path);
                } else {
                    let relative = path
                        .strip_prefix(dir.path())
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/");
                    files.insert(relative, std::fs::read_to_string(&path).unwrap());
                }
            }
        }
        (files, count)
    }

    fn reachable(files: &BTreeMap<String, String>) -> BTreeMap<&str, &str> {
        files
            .iter()
            .filter(|(path, _)| !QUARANTINED_FILES.contains(&path.as_str()))
            .map(|(path, text)| (path.as_str(), text.as_str()))
            .collect()
    }

    /// The frontmatter block of a note, parsed, and its body.
    fn split(text: &str) -> (serde_json::Value, &str) {
        let Some(rest) = text.strip_prefix("---\n") else {
            return (serde_json::Value::Null, text);
        };
        let (front, body) = rest.split_once("\n---\n").expect("a closing --- line");
        (
            serde_saphyr::from_str(front).unwrap_or_else(|e| panic!("{front}: {e}")),
            body,
        )
    }

    /// The lines of a body outside fenced code blocks.
    fn prose(body: &str) -> Vec<&str> {
        let mut in_code = false;
        body.lines()
            .filter(|line| {
                if line.starts_with("```") {
                    in_code = !in_code;
                    return false;
                }
                !in_code
            })
            .collect()
    }

    #[test]
    fn writes_every_note_and_the_quarantined_files() {
        let (files, count) = written();
        assert_eq!(count, files.len());
        assert_eq!(count, NOTE_COUNT + QUARANTINED_FILES.len());
        let notes = reachable(&files);
        assert_eq!(notes.len(), NOTE_COUNT);
        assert!(notes.keys().all(|path| path.ends_with(".md")));
        for path in QUARANTINED_FILES.iter().chain(&AGENTS_FILES).chain(&SKILL_FILES) {
            assert!(files.contains_key(*path), "{path}");
        }
        for folder in [
            "Projects/Atlas/",
            "Projects/Bindery/",
            "Meetings/",
            "People/",
            "Reading/",
            "Areas/",
        ] {
            assert!(notes.keys().any(|path| path.starts_with(folder)), "{folder}");
        }
        assert!(files.contains_key("Daily/2026-11-30.md") && files.contains_key("Daily/2026-11-21.md"));
        assert!(files.values().all(|text| !text.contains("@{") && text.ends_with('\n')));
    }

    #[test]
    fn distinctive_words_appear_only_where_promised() {
        let (files, _) = written();
        let promised: [(&str, &[&str]); 3] = [
            (PRIVATE_WORD, &[PRIVATE_NOTE]),
            (OVERRIDDEN_WORD, &[OVERRIDDEN_NOTE]),
            (QUARANTINED_WORD, &QUARANTINED_FILES),
        ];
        for (word, places) in promised {
            // Each half alone too: a search engine splits the word at its hyphen.
            for part in std::iter::once(word).chain(word.split('-')) {
                let found: BTreeSet<&str> = files
                    .iter()
                    .filter(|(_, text)| text.to_lowercase().contains(part))
                    .map(|(path, _)| path.as_str())
                    .collect();
                assert_eq!(found, places.iter().copied().collect(), "{part}");
            }
        }
        let (front, body) = split(&files[PRIVATE_NOTE]);
        assert!(front["title"].as_str().unwrap().contains(PRIVATE_WORD) && body.contains(PRIVATE_WORD));
    }

    #[test]
    fn frontmatter_parses_and_the_access_keys_are_where_the_constants_say() {
        let (files, _) = written();
        let mut access = BTreeMap::new();
        let mut overridden = Vec::new();
        let mut string_tags = 0;
        let mut facets: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
        let (mut with_id, mut without_front) = (0, 0);
        for (path, text) in reachable(&files) {
            let (front, _) = split(text);
            if front.is_null() {
                without_front += 1;
                continue;
            }
            assert!(front.is_object(), "{path}");
            with_id += usize::from(front.get("id").is_some());
            if let Some(value) = front.get("access") {
                access.insert(value.as_str().unwrap().to_string(), path);
            }
            if let Some(value) = front.get("agent_overrides") {
                assert_eq!(value[OVERRIDDEN_FOR], "no-access", "{path}");
                overridden.push(path);
            }
            string_tags += usize::from(front.get("tags").is_some_and(serde_json::Value::is_string));
            if let Some(status) = front.get("status") {
                assert!(
                    ["todo", "active", "done", "someday"].contains(&status.as_str().unwrap()),
                    "{path}"
                );
            }
            for key in ["due", "created"] {
                if let Some(day) = front.get(key) {
                    assert!(Day::parse(day.as_str().unwrap()).is_ok(), "{path}: {key}");
                }
            }
            if let Some(priority) = front.get("priority") {
                assert!(priority.is_u64(), "{path}");
            }
            for facet in front.get("facets").and_then(|f| f.as_array()).into_iter().flatten() {
                facets
                    .entry(facet.as_str().unwrap().to_string())
                    .or_default()
                    .insert(path);
            }
        }
        let read_only = ("read-only".to_string(), READ_ONLY_NOTE);
        assert_eq!(
            access,
            BTreeMap::from([read_only, ("private".to_string(), PRIVATE_NOTE)])
        );
        assert_eq!(overridden, vec![OVERRIDDEN_NOTE]);
        assert_eq!(string_tags, 1);
        assert!(with_id > 5 && without_front > 3);
        assert_eq!(
            facets.keys().collect::<Vec<_>>(),
            ["family", "health", "side-project", "work"]
        );
        for (facet, paths) in &facets {
            assert_eq!(
                &notes_in_facet(facet).into_iter().collect::<BTreeSet<_>>(),
                paths,
                "{facet}"
            );
        }
        assert!(facets["work"].len() >= 10 && notes_in_facet("nothing").is_empty());
    }

    #[test]
    fn every_link_outside_code_points_at_one_note() {
        let (files, _) = written();
        let notes = reachable(&files);
        // The names a note answers to: its path and file name without `.md`, and its title.
        let mut names: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
        let mut untitled = 0;
        for (path, text) in &notes {
            let (front, body) = split(text);
            let stem = path.trim_end_matches(".md");
            let file_name = stem.rsplit('/').next().unwrap();
            let heading = prose(body).into_iter().find_map(|line| line.strip_prefix("# "));
            let title = front.get("title").and_then(|t| t.as_str()).or(heading);
            untitled += usize::from(title.is_none());
            // Lowercased: a resolver that ignores case must find exactly one note too.
            for name in [Some(stem), Some(file_name), title].into_iter().flatten() {
                names.entry(name.to_lowercase()).or_default().insert(path);
            }
        }
        assert_eq!(untitled, 2, "two notes are known by their file name only");
        let mut links = 0;
        for (path, text) in &notes {
            let (_, body) = split(text);
            let prose = prose(body).join("\n");
            assert!(!prose.contains("not-a-link") && !prose.contains("not-a-tag"), "{path}");
            for piece in prose.split("[[").skip(1) {
                let (link, _) = piece
                    .split_once("]]")
                    .unwrap_or_else(|| panic!("{path}: unclosed link"));
                let target = link.split('|').next().unwrap();
                let (name, heading) = target.split_once('#').map_or((target, None), |(n, h)| (n, Some(h)));
                let found = names
                    .get(&name.to_lowercase())
                    .unwrap_or_else(|| panic!("{path}: [[{link}]] points nowhere"));
                assert_eq!(found.len(), 1, "{path}: [[{link}]] is ambiguous");
                if let Some(heading) = heading {
                    let target_text = notes[found.first().unwrap()];
                    assert!(
                        target_text.lines().any(|l| l.trim_start_matches('#').trim() == heading),
                        "{link}"
                    );
                }
                links += 1;
            }
            for piece in prose.split("](").skip(1) {
                let target = piece.split_once(')').unwrap().0;
                let folder = Path::new(path).parent().unwrap();
                let mut resolved: Vec<&str> = folder.to_str().unwrap().split('/').filter(|p| !p.is_empty()).collect();
                for part in target.split('/') {
                    if part == ".." {
                        resolved.pop();
                    } else {
                        resolved.push(part);
                    }
                }
                assert!(notes.contains_key(resolved.join("/").as_str()), "{path}: ({target})");
            }
        }
        assert!(links > 60);
        let code = &files["Projects/Atlas/alerting-runbook.md"];
        assert!(code.contains("#not-a-tag") && code.contains("[[not-a-link]]"));
    }

    #[test]
    fn skills_name_and_describe_themselves() {
        let (files, _) = written();
        for path in SKILL_FILES {
            let (front, body) = split(&files[path]);
            let folder = path.trim_end_matches("/SKILL.md").rsplit('/').next().unwrap();
            assert_eq!(front["name"], folder);
            assert!(front["description"].as_str().is_some_and(|d| d.len() > 20));
            assert!(body.contains("# "));
        }
    }

    #[test]
    fn days_follow_the_end() {
        assert_eq!(
            fill("@{0} @{1} @{-1} @{x} @{", end()),
            "2026-11-30 2026-11-29 2026-12-01 @{x} @{"
        );
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), Day::parse("2030-01-02").unwrap()).unwrap();
        let note = std::fs::read_to_string(dir.path().join("Daily/2030-01-02.md")).unwrap();
        assert!(note.contains("[[2030-01-01]]"));
    }
}
