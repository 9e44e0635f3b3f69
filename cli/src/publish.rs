//! `tutorflow publish --bucket B [--prefix P] [--endpoint-url URL] [DIR]`.

use std::path::PathBuf;
use std::process::ExitCode;

use tutorflow::content::Bundle;
use tutorflow::store::{self, PublishError};

use crate::bundle;
use crate::validate::print_problems;

#[derive(clap::Args)]
pub struct Args {
    /// Bucket the functions read content from.
    #[arg(long, env = "TUTORFLOW_CONTENT_BUCKET")]
    bucket: String,
    /// Key prefix inside the bucket (content.prefix).
    #[arg(long, default_value = "", env = "TUTORFLOW_CONTENT_PREFIX")]
    prefix: String,
    /// S3-compatible endpoint instead of AWS (moto, MinIO).
    #[arg(long, env = "TUTORFLOW_S3_ENDPOINT")]
    endpoint_url: Option<String>,
    /// AWS region; default: the SDK's (AWS_REGION, profile).
    #[arg(long, env = "TUTORFLOW_REGION")]
    region: Option<String>,
    /// Bundle root (holding workflows/ and prompts/) or its workflows/ directory.
    #[arg(default_value = ".")]
    dir: PathBuf,
}

pub async fn run(args: Args) -> ExitCode {
    let Some((source, files)) = bundle::fetch(&args.dir).await else {
        return ExitCode::FAILURE;
    };
    // Validate as `tutorflow validate` does, before connecting anywhere:
    // invalid content is never uploaded.
    if let Err(diagnostics) = Bundle::validate(&files) {
        print_problems(&source, &diagnostics);
        eprintln!("nothing was published");
        return ExitCode::FAILURE;
    }
    let client = store::s3_client(args.endpoint_url.as_deref(), args.region.as_deref()).await;
    match store::publish(
        &client,
        &args.bucket,
        &args.prefix,
        &files,
        chrono::Utc::now(),
    )
    .await
    {
        Ok(report) => {
            println!(
                "published version {} ({} files) to {}",
                report.version.get(..12).unwrap_or(&report.version),
                report.files,
                report.manifest_url
            );
            ExitCode::SUCCESS
        }
        Err(PublishError::Invalid(diagnostics)) => {
            print_problems(&source, &diagnostics);
            eprintln!("nothing was published");
            ExitCode::FAILURE
        }
        Err(PublishError::Upload(e)) => {
            eprintln!("error: {e}");
            eprintln!("the previously published bundle is still the one served");
            ExitCode::FAILURE
        }
    }
}
