//! Card events name units and questions; a name the thread's course does
//! not have is refused before anything is read or applied.

use super::error::ServiceError;
use crate::content::Course;
use crate::model::ClientEvent;

/// Every id `event` names exists in `course` (422 naming the field otherwise).
pub(crate) fn check_client_event(course: &Course, event: &ClientEvent) -> Result<(), ServiceError> {
    let (unit_id, question_id) = match event {
        ClientEvent::None
        | ClientEvent::ExamAnswer { .. }
        | ClientEvent::ExamSkip { .. }
        | ClientEvent::ExamEnd
        | ClientEvent::SurveyAnswer { .. }
        | ClientEvent::SurveySkip { .. } => (None, None),
        ClientEvent::RequestDrill { unit_id }
        | ClientEvent::IAmStuck { unit_id }
        | ClientEvent::DrillContinue { unit_id, .. } => (unit_id.as_deref(), None),
        ClientEvent::ExamContinue {
            unit_id,
            question_id,
            ..
        } => (unit_id.as_deref(), question_id.as_deref()),
    };
    if let Some(unit) = unit_id
        && course.unit(unit).is_none()
    {
        return Err(unknown(
            "clientEvent.unitId",
            format!("unit `{unit}` is not part of course `{}`", course.id),
        ));
    }
    if let Some(question) = question_id {
        let Some((owner, _)) = course.exam_item(question) else {
            return Err(unknown(
                "clientEvent.questionId",
                format!("question `{question}` is not in course `{}`", course.id),
            ));
        };
        if let Some(unit) = unit_id
            && unit != owner.id
        {
            return Err(unknown(
                "clientEvent.unitId",
                format!(
                    "question `{question}` belongs to unit `{}`, not `{unit}`",
                    owner.id
                ),
            ));
        }
    }
    Ok(())
}

fn unknown(field: &str, detail: String) -> ServiceError {
    ServiceError::UnknownId {
        field: field.to_owned(),
        detail,
    }
}
