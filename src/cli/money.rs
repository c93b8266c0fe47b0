//! `toolhost events` and `toolhost payouts`: what happened to a builder's endpoints and money,
//! and where and when it is paid. Amounts are printed in USD; the server's exact atomic units
//! are in `--json`.

use reqwest::Method;
use serde_json::{json, Map, Value};

use super::api::Api;
use super::output::{cell, table, usd, Out};
use super::{EventsArgs, Outcome, PayoutsAction, PayoutsArgs};

/// `toolhost events`: the builder's event feed, newest first.
pub(super) async fn events(args: &EventsArgs, out: &Out) -> Outcome {
    let api = Api::from_global(&args.global)?;
    api.require_key()?;
    let mut query = vec![
        ("since", args.since.clone()),
        ("limit", args.limit.to_string()),
    ];
    if let Some(slug) = &args.slug {
        query.push(("endpointSlug", slug.clone()));
    }
    let query: String = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(query)
        .finish();
    let answer = api.get(&format!("/ai/builders/events?{query}")).await?;
    if out.json {
        out.json(&answer);
        return Ok(());
    }
    let rows: Vec<Vec<String>> = answer["events"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            vec![
                cell(&e["at"]),
                cell(&e["kind"]),
                cell(&e["endpointSlug"]),
                e["data"].to_string().chars().take(100).collect(),
            ]
        })
        .collect();
    if rows.is_empty() {
        println!("No events since {}.", args.since);
    } else {
        println!("{}", table(&["AT", "KIND", "ENDPOINT", "DETAILS"], &rows));
    }
    Ok(())
}

/// `toolhost payouts [list|settings|create]`.
pub(super) async fn payouts(args: &PayoutsArgs, out: &Out) -> Outcome {
    let api = Api::from_global(&args.global)?;
    api.require_key()?;
    match args.action.as_ref().unwrap_or(&PayoutsAction::List) {
        PayoutsAction::List => {
            let answer = api.get("/ai/builders/payouts").await?;
            if out.json {
                out.json(&answer);
                return Ok(());
            }
            println!(
                "Collected and unpaid: {} from {} sales (a packet would pay this now)",
                usd(&answer["unpaidNetUnits"]),
                cell(&answer["unpaidReceipts"])
            );
            println!(
                "Uncollected: {} from {} sales (recorded only, or pending on-chain: not paid out)",
                usd(&answer["uncollectedNetUnits"]),
                cell(&answer["uncollectedReceipts"])
            );
            let rows: Vec<Vec<String>> = answer["packets"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| {
                    vec![
                        cell(&p["packetId"]),
                        cell(&p["status"]),
                        usd(&p["amount"]),
                        cell(&p["payTo"]),
                        cell(&p["createdAt"]),
                        cell(&p["transaction"]),
                    ]
                })
                .collect();
            if !rows.is_empty() {
                println!(
                    "\n{}",
                    table(
                        &[
                            "PACKET",
                            "STATUS",
                            "AMOUNT",
                            "PAY TO",
                            "CREATED",
                            "TRANSACTION"
                        ],
                        &rows
                    )
                );
            }
        }
        PayoutsAction::Create => {
            let answer = api.send(Method::POST, "/ai/builders/payouts", None).await?;
            if out.json {
                out.json(&answer);
                return Ok(());
            }
            let packet = &answer["packet"];
            println!(
                "Packet {}: {} to {} on {} ({}); the admin pays it and marks it paid",
                cell(&packet["packetId"]),
                usd(&packet["amount"]),
                cell(&packet["payTo"]),
                cell(&packet["network"]),
                cell(&packet["status"])
            );
        }
        PayoutsAction::Settings {
            pay_to,
            network,
            asset,
            minimum_usd,
        } => {
            let answer = if pay_to.is_none() && network.is_none() {
                api.get("/ai/builders/payout-settings").await?
            } else {
                let mut body = Map::new();
                body.insert("payTo".into(), json!(pay_to));
                body.insert("network".into(), json!(network));
                if let Some(asset) = asset {
                    body.insert("asset".into(), json!(asset));
                }
                body.insert("minimumUsd".into(), json!(minimum_usd));
                api.send(
                    Method::POST,
                    "/ai/builders/payout-settings",
                    Some(&Value::Object(body)),
                )
                .await?
            };
            if out.json {
                out.json(&answer);
                return Ok(());
            }
            let settings = &answer["payoutSettings"];
            if settings.is_null() {
                println!("No payout settings yet: `toolhost payouts settings --pay-to 0x… --network eip155:…`");
            } else {
                println!(
                    "Payouts go to {} on {} (asset {}), once at least {} USD is collected",
                    cell(&settings["payTo"]),
                    cell(&settings["network"]),
                    cell(&settings["asset"]),
                    cell(&settings["minimumUsd"])
                );
            }
        }
    }
    Ok(())
}
