//! What a page says after a form redirected to it ("the grant is saved"). The redirect carries only
//! a fixed word from this list, never text: a link someone else made can then not put words of its
//! choosing on the owner's page.

/// A confirmation shown once after a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    CodeClosed,
    GrantSaved,
    Revoked,
    Accepted,
    Rejected,
    SomeStale,
    Reverted,
    Restored,
    Disconnected,
    Noted,
    GraphReverted,
    Cleared,
}

impl Notice {
    #[cfg(test)]
    const ALL: [Notice; 12] = [
        Notice::CodeClosed,
        Notice::GrantSaved,
        Notice::Revoked,
        Notice::Accepted,
        Notice::Rejected,
        Notice::SomeStale,
        Notice::Reverted,
        Notice::Restored,
        Notice::Disconnected,
        Notice::Noted,
        Notice::GraphReverted,
        Notice::Cleared,
    ];

    /// The word in the redirect's query.
    pub fn as_str(self) -> &'static str {
        match self {
            Notice::CodeClosed => "closed",
            Notice::GrantSaved => "saved",
            Notice::Revoked => "revoked",
            Notice::Accepted => "accepted",
            Notice::Rejected => "rejected",
            Notice::SomeStale => "left",
            Notice::Reverted => "reverted",
            Notice::Restored => "restored",
            Notice::Disconnected => "disconnected",
            Notice::Noted => "noted",
            Notice::GraphReverted => "graph-reverted",
            Notice::Cleared => "cleared",
        }
    }

    /// The notice a query names, among those the page shows (`allowed`); anything else is no notice,
    /// so a link cannot make one page claim what only another page's form does.
    pub fn parse(word: Option<&str>, allowed: &[Notice]) -> Option<Notice> {
        word.and_then(|word| allowed.iter().copied().find(|n| n.as_str() == word))
    }

    /// The sentence the page shows.
    pub fn text(self) -> &'static str {
        match self {
            Notice::CodeClosed => "Sign-in is closed: the pairing code no longer works.",
            Notice::GrantSaved => "Saved. The connection's next call already sees the new grant.",
            Notice::Revoked => "Revoked. Its next call is refused; its past calls stay in the activity log.",
            Notice::Accepted => {
                "Accepted: the change is made, in the note or in the graph. The Changes page can undo it."
            }
            Notice::Rejected => "Rejected: nothing changed. The agent sees the outcome with my_proposals.",
            Notice::SomeStale => {
                "Done where it still applied. The proposals left below could not be made as proposed (their note changed \
                 since, or a rule now refuses them): review each."
            }
            Notice::Reverted => "Undone: the note is back as it was before that change. The undo can be undone too.",
            Notice::Restored => {
                "Restored: the deleted notes are back where they were. The restore is in the history and can be undone too."
            }
            Notice::Disconnected => {
                "Removed: the connection and every note on it are gone from the graph. The Changes page can undo it."
            }
            Notice::Noted => "Saved: your note is on the connection, beside the agents' own.",
            Notice::GraphReverted => {
                "Undone: the connection is back as it was before that change. The undo can be undone too."
            }
            Notice::Cleared => {
                "Removed: the sign-ins that had ended or never finished are gone. Their past calls stay in the activity log."
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_known_words_make_a_notice() {
        for notice in Notice::ALL {
            assert_eq!(Notice::parse(Some(notice.as_str()), &Notice::ALL), Some(notice));
        }
        assert_eq!(
            Notice::parse(Some("saved"), &[Notice::Revoked]),
            None,
            "another page's notice"
        );
        assert_eq!(Notice::parse(Some("<script>"), &Notice::ALL), None);
        assert_eq!(Notice::parse(Some(""), &Notice::ALL), None);
        assert_eq!(Notice::parse(None, &Notice::ALL), None);
    }
}
