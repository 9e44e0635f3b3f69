//! AWS SDK clients, with the endpoint override used for moto and DynamoDB Local.

use aws_config::{BehaviorVersion, Region};

async fn sdk_config(endpoint_url: Option<&str>, region: Option<&str>) -> aws_config::SdkConfig {
    let mut loader = aws_config::defaults(BehaviorVersion::latest());
    if let Some(url) = endpoint_url {
        loader = loader.endpoint_url(url);
    }
    // An emulator needs some region even where no AWS profile is set up.
    match (region, endpoint_url) {
        (Some(region), _) => loader = loader.region(Region::new(region.to_owned())),
        (None, Some(_)) => loader = loader.region(Region::new("us-east-1")),
        (None, None) => {}
    }
    loader.load().await
}

/// A DynamoDB client using the default credential chain.
pub async fn dynamodb_client(
    endpoint_url: Option<&str>,
    region: Option<&str>,
) -> aws_sdk_dynamodb::Client {
    aws_sdk_dynamodb::Client::new(&sdk_config(endpoint_url, region).await)
}

/// An S3 client using the default credential chain. Behind an endpoint
/// override it uses path-style addressing, which emulators need.
pub async fn s3_client(endpoint_url: Option<&str>, region: Option<&str>) -> aws_sdk_s3::Client {
    let shared = sdk_config(endpoint_url, region).await;
    let config = aws_sdk_s3::config::Builder::from(&shared)
        .force_path_style(endpoint_url.is_some())
        .build();
    aws_sdk_s3::Client::from_conf(config)
}

/// An SQS client using the default credential chain.
pub async fn sqs_client(endpoint_url: Option<&str>, region: Option<&str>) -> aws_sdk_sqs::Client {
    aws_sdk_sqs::Client::new(&sdk_config(endpoint_url, region).await)
}
